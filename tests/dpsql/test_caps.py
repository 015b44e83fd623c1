"""Per-query caps (issue 9): `QueryCaps` from a dataset policy or the CLI flags refuse an
over-cap query before any data is read; without caps a huge ε still gives exact results."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from core.cli import main
from core.dpsql.execute.engine import Engine
from core.dpsql.service import prepare
from core.errors import InputError
from core.governance.caps import NO_CAPS, QueryCaps
from core.privacy import Noise
from tests.dpsql.governed import Charged


def q(eps, delta, cu=1, extra=""):
    return (
        f"SELECT WITH ANONYMIZATION OPTIONS (epsilon = {eps}, delta = {delta}, "
        f"max_groups_contributed = {cu}{extra}) dept, ANON_COUNT(*, 1) AS c "
        "FROM Users GROUP BY dept"
    )


@pytest.fixture
def catalog(catalog_of):
    users = pd.DataFrame({"uid": range(40), "dept": ["HR"] * 25 + ["IT"] * 15})
    return catalog_of({"Users": users})


def attempt(catalog, sql, caps, directory):
    session = Charged(directory)
    result = session.run(prepare(sql, catalog, Noise.seeded(0)), Engine(catalog), caps)
    return result, session


@pytest.mark.parametrize(
    ("sql", "caps", "names"),
    [
        (q("1e300", 0.9), QueryCaps(1.0, 1e-5), "max_epsilon_per_query = 1"),
        (q(2, 1e-5), QueryCaps(max_epsilon=1.0), "max_epsilon_per_query = 1"),
        (q(1, 1e-3), QueryCaps(max_delta=1e-5), "max_delta_per_query = 1e-05"),
        (q(1, 1e-5), QueryCaps(max_delta=0.0), "PUBLIC_GROUPS"),
    ],
)
def test_over_cap_queries_are_refused_before_reading(
    catalog, monkeypatch, sql, caps, names, tmp_path
):
    engine = Engine(catalog)
    reads = []
    monkeypatch.setattr(engine, "frame", lambda s: reads.append(s))
    session = Charged(tmp_path)
    with pytest.raises(InputError) as err:
        session.run(prepare(sql, catalog, Noise.seeded(0)), engine, caps)
    message = str(err.value)
    assert message.startswith("DPX-B002") and names in message
    assert "Fix" in message and "Nothing was charged" in message
    assert reads == [] and session.spent == (0.0, 0.0)
    assert len(session.registry.refusals("d")) == 1  # recorded


def test_at_the_cap_runs(catalog, tmp_path):
    result, session = attempt(catalog, q(1, 1e-5), QueryCaps(1.0, 1e-5), tmp_path)
    assert session.spent[0] == pytest.approx(1.0)
    assert result.released.partitions_released >= 0


def test_without_caps_a_huge_epsilon_gives_exact_counts(catalog, tmp_path):
    """Data without caps keeps none: exact zero-noise checks still work."""
    result, session = attempt(catalog, q("1e300", 0.5), NO_CAPS, tmp_path)
    assert dict(zip(result.table["dept"], result.table["c"], strict=True)) == {"HR": 25, "IT": 15}
    assert session.spent[0] == 1e300


@pytest.mark.parametrize(
    "kwargs",
    [{"max_epsilon": 0}, {"max_epsilon": -1}, {"max_epsilon": float("inf")},
     {"max_epsilon": float("nan")}, {"max_delta": 1.0}, {"max_delta": -0.1}],
)  # fmt: skip
def test_bad_caps_are_refused(kwargs):
    with pytest.raises(InputError, match="DPX-B002"):
        QueryCaps(**kwargs)


@pytest.fixture
def users_csv(tmp_path):
    users = pd.DataFrame({"uid": range(40), "dept": ["HR"] * 25 + ["IT"] * 15})
    users.to_csv(tmp_path / "users.csv", index=False)
    return tmp_path / "users.csv"


def test_cli_flags_cap_the_query(users_csv, capsys):
    argv = ["sql", "--table", f"Users={users_csv}", "--uid", "uid", "--query", q("1e300", 0.9)]
    code = main([*argv, "--max-epsilon-per-query", "1", "--max-delta-per-query", "1e-5"])
    err = capsys.readouterr().err
    assert code == 2 and "DPX-B002" in err and "max_epsilon_per_query = 1" in err
    code = main([*argv, "--max-epsilon-per-query", "-1"])
    assert code == 2 and "DPX-B002" in capsys.readouterr().err


def test_cli_without_flags_has_no_cap(users_csv, capsys):
    argv = ["sql", "--table", f"Users={users_csv}", "--uid", "uid", "--query", q("1e300", 0.5),
            "--json", "--seed", "1"]  # fmt: skip
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert sorted(out["rows"]) == [["HR", 25.0], ["IT", 15.0]]
