"""Issue 29, item 5: bad input accepted or misleading, refused before anything is charged."""

from __future__ import annotations

import pytest

from core.cli import main
from core.errors import InputError
from core.planning.budget import parse_item
from core.registry import Registry

TABLE = "SA,x,y\n" + "".join(f"{'abc'[i % 3]},{i},{i % 2}\n" for i in range(60))
PP = ["--sa", "SA", "--rho1", "1/3", "--rho2", "2/3", "--perturb"]


def refused(capsys, argv) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Fix:" in err
    return err


def nothing_charged(reg) -> bool:
    return not (reg / "registry.sqlite").exists() or not Registry(reg).releases()


@pytest.mark.parametrize("columns", [",,", "", "x,,y", ",x", "x,x"])
def test_balance_columns_that_name_nothing_or_slip_are_refused(tmp_path, reg, capsys, columns):
    table = tmp_path / "t.csv"
    table.write_text(TABLE)
    out = tmp_path / "o.csv"
    refused(capsys, ["balance", str(table), *PP, "--columns", columns, "--out", str(out)])
    assert not out.exists() and nothing_charged(reg)


@pytest.mark.parametrize("categories", ["", " , ", "a,,b"])
def test_balance_empty_declared_categories_are_refused(tmp_path, reg, capsys, categories):
    """An empty declared list used to fall back to categories read from the data (delta > 0)."""
    table = tmp_path / "t.csv"
    table.write_text(TABLE)
    out = tmp_path / "o.csv"
    err = refused(capsys, ["balance", str(table), *PP, "--categories", categories,
                           "--out", str(out)])  # fmt: skip
    assert "--categories" in err
    assert not out.exists() and nothing_charged(reg)


def test_a_planned_location_release_with_an_unknown_method_is_refused():
    with pytest.raises(InputError) as err:
        parse_item("location:0.5:method=bogus")
    assert "bogus" in str(err.value) and "htf" in str(err.value) and "auto" in str(err.value)
    assert parse_item("location:0.5:method=AUTO").match == {"method": "auto"}


def test_plan_budget_with_an_unknown_method_exits_2(tmp_path, reg, capsys):
    table = tmp_path / "p.csv"
    table.write_text("lat,lon\n34,-118\n")
    assert main(["dataset", "add", "pts", "--table", f"p={table}", "--row-is-unit",
                 "--epsilon", "5"]) == 0  # fmt: skip
    capsys.readouterr()
    err = refused(capsys, ["plan", "budget", "draft", "--dataset", "pts", "--item",
                           "location:0.5:method=bogus"])  # fmt: skip
    assert "unknown location method 'bogus'" in err and "privtree" in err


def test_plan_balance_categories_with_an_empty_item_are_refused(capsys, reg):
    """`--categories ',,'` with --shares used to fall back to the shares' names."""
    err = refused(capsys, ["plan", "balance", "--categories", ",,", "--shares", "a=0.5,b=0.5",
                           "--rows", "1000", "--rho1", "0.3", "--rho2", "0.6"])  # fmt: skip
    assert "--categories" in err


POINTS_TEXT = "lat,lon,uid,SA\n" + "".join(f"{34 + i / 1e3},{-118 - i / 1e3},{i},a\n" for i in range(40))
BBOX = "--bbox=-119,33,-117,35"
IN_PLACE = {  # every command that reads an unregistered CSV in place (DuckDB) or registers one
    "htf": ["htf", "{f}", "--epsilon", "1", BBOX, "--out", "{o}.csv", "--seed", "1"],
    "release": ["release", "{f}", "--method", "ug", "--epsilon", "1", BBOX, "--out", "{o}.geojson"],
    "balance": ["balance", "{f}", *PP, "--out", "{o}.csv"],
    "dataset add": ["dataset", "add", "d", "--table", "t={f}", "--epsilon", "1", "--row-is-unit"],
}


@pytest.mark.parametrize("command", sorted(IN_PLACE))
@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32"])
def test_a_utf16_or_32_csv_is_named_as_such_by_every_reader(tmp_path, reg, capsys, command, encoding):
    """Readers that open the file in place sniff a bounded prefix as loading does: the message
    names the encoding and says to save as UTF-8 (it said 'column not in the table' with the
    header's bytes garbled), and nothing is written or charged."""
    path = tmp_path / "points.csv"
    path.write_bytes(POINTS_TEXT.encode(encoding))
    out = tmp_path / "out"
    argv = [a.format(f=path, o=out) for a in IN_PLACE[command]]
    err = refused(capsys, argv)
    assert "text; save it as UTF-8" in err and encoding[:6].upper() in err
    assert not list(tmp_path.glob("out*")) and nothing_charged(reg)


@pytest.mark.parametrize("command", sorted(IN_PLACE))
def test_a_binary_file_is_called_binary_by_every_reader(tmp_path, reg, capsys, command):
    path = tmp_path / "points.csv"
    path.write_bytes(b"lat,lon\x00\x01\x02" + bytes(range(256)) * 8)
    out = tmp_path / "out"
    err = refused(capsys, [a.format(f=path, o=out) for a in IN_PLACE[command]])
    assert "binary" in err
    assert not list(tmp_path.glob("out*")) and nothing_charged(reg)


BELOW_FLOOR = {  # every option that sets a release's ε, given below the shared floor
    "htf --epsilon": ["htf", "{f}", "--epsilon", "{e}", BBOX, "--out", "{o}.csv", "--seed", "1"],
    "release --epsilon": ["release", "{f}", "--method", "ug", "--epsilon", "{e}", BBOX, "--out",
                          "{o}.geojson"],
    "balance --plan-epsilon": ["balance", "{f}", *PP, "--plan-epsilon", "{e}", "--out", "{o}.csv"],
    "sql --epsilon": ["sql", "--table", "t={f}", "--uid", "uid", "--epsilon", "{e}", "--query",
                      "SELECT WITH ANONYMIZATION SA, ANON_COUNT(*, 1) AS n FROM t GROUP BY SA"],
    "plan release --pilot-epsilon": ["plan", "release", "{f}", "--target-mre", "0.5", BBOX,
                                     "--pilot-epsilon", "{e}"],
}  # fmt: skip


@pytest.mark.parametrize("option", sorted(BELOW_FLOOR))
@pytest.mark.parametrize("epsilon", ["1e-300", "1e-7"])
def test_an_epsilon_below_the_shared_floor_is_refused_while_parsing(
    tmp_path, reg, capsys, option, epsilon
):
    """`balance --perturb --plan-epsilon 1e-300` ran for minutes (issue 29); every option that
    sets a release's ε now takes the one floor (core.privacy.cost.EPSILON_MIN) before anything
    is read or charged."""
    from core.privacy.cost import EPSILON_MIN

    path = tmp_path / "points.csv"
    path.write_text(POINTS_TEXT)
    out = tmp_path / "out"
    err = refused(capsys, [a.format(f=path, o=out, e=epsilon) for a in BELOW_FLOOR[option]])
    assert f"{EPSILON_MIN:g}" in err
    assert not list(tmp_path.glob("out*")) and nothing_charged(reg)


def test_the_page_path_takes_the_same_floor():
    from core.balancing.release import ReleaseSettings
    from core.privacy.cost import EPSILON_MIN

    with pytest.raises(InputError, match="below the smallest"):
        ReleaseSettings(1 / 3, 2 / 3, plan_epsilon=EPSILON_MIN / 10)
    assert ReleaseSettings(1 / 3, 2 / 3, plan_epsilon=EPSILON_MIN).plan_epsilon == EPSILON_MIN
