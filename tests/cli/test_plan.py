"""`dpx plan`: the planners from the command line, in owner and analyst mode. Planning charges
nothing; a pilot and a bounds histogram are charged as releases of their own; bad input is one
line and exit 2; an analyst sees no raw value."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.registry import Registry
from tests.cli.conftest import run_dpx

BBOX = "--bbox=-118.6,33.7,-117.8,34.4"
SENTINEL = "34.0123456789"  # a raw value planted in the data: never printed


@pytest.fixture
def data(tmp_path, registry_dir, capsys):
    rng = np.random.default_rng(5)
    n = 4000
    frame = pd.DataFrame(
        {
            "person": rng.integers(0, 1500, n),
            "lat": 34.05 + rng.normal(0, 0.05, n),
            "lon": -118.24 + rng.normal(0, 0.05, n),
            "amount": rng.lognormal(3, 1, n).round(2),
            "dept": rng.choice(["a", "b", "c", "d"], n),
        }
    )
    frame.loc[0, "lat"] = float(SENTINEL)
    path = tmp_path / "visits.csv"
    frame.to_csv(path, index=False)
    argv = ["dataset", "add", "visits", "--table", f"visits={path}", "--uid", "person",
            "--epsilon", "5", "--delta", "1e-5"]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    return path


def run(capsys, monkeypatch, argv, role="owner"):
    return run_dpx(capsys, monkeypatch, argv, role)


PLAN_RELEASE = ["plan", "release", "--dataset", "visits", BBOX, "--grid", "64",
                "--max-points-per-person", "3", "--method", "ug", "--target-mre", "0.3"]  # fmt: skip


def test_a_pilot_is_charged_as_its_own_release_and_reused_free(data, capsys, monkeypatch):
    code, out, err = run(capsys, monkeypatch, [*PLAN_RELEASE, "--pilot-epsilon", "0.1", "--json"])
    assert code == 0, err
    plan = json.loads(out)
    assert plan["pilot_epsilon"] == 0.1 and plan["epsilon"] > 0
    assert len(plan["predicted_mre"]) == 3 and "pilot" in plan["basis"]
    reg = Registry()
    (pilot,) = reg.releases("visits")
    assert (pilot.tool, pilot.epsilon) == ("pilot", 0.1)
    assert sum(m.cost.epsilon for m in pilot.mechanisms) == pytest.approx(0.1)
    assert plan["pilot"]["release_id"] == pilot.id
    # the analyst plans again on the recorded pilot: nothing more is charged
    code, out, err = run(capsys, monkeypatch,
                         [*PLAN_RELEASE, "--pilot-release", str(pilot.id), "--json"], "analyst")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["epsilon"] == plan["epsilon"]  # same pilot, same seed: same plan
    assert reg.spent("visits") == (0.1, 0.0)
    assert SENTINEL not in out + err


def test_a_declared_shape_charges_nothing(data, capsys, monkeypatch):
    argv = ["plan", "release", BBOX, "--grid", "64", "--public-n", "4000", "--shape", "city",
            "--method", "ug,privtree", "--target-mre", "0.2", "--json"]  # fmt: skip
    code, out, err = run(capsys, monkeypatch, argv, "analyst")
    assert code == 0, err
    plan = json.loads(out)
    assert plan["pilot_epsilon"] == 0 and "declared public size" in plan["basis"]
    assert {m["method"] for m in plan["per_method"]} == {"ug", "privtree"}
    assert Registry().releases() == []


def test_plan_sql_on_a_dataset_in_analyst_mode(data, capsys, monkeypatch):
    query = ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (delta = 1e-5, max_groups_contributed = 1) "
             "dept, COUNT(DISTINCT person) AS n, SUM(amount, contribution_bounds_per_group => "
             "(0, 200)) AS total FROM visits GROUP BY dept")  # fmt: skip
    argv = ["plan", "sql", "--dataset", "visits", "--query", query, "--target", "total=500",
            "--target", "n=10%@300", "--json"]  # fmt: skip
    code, out, err = run(capsys, monkeypatch, argv, "analyst")
    assert code == 0, err
    plan = json.loads(out)
    assert plan["epsilon"] > 0 and plan["threshold"] is not None
    assert all(t["met"] for t in plan["as_written"]["targets"])
    assert plan["survival"]["300"] >= 0.95
    assert Registry().releases() == []  # planning charges nothing
    assert SENTINEL not in out


def test_plan_balance_owner_counts_rows_analyst_must_declare(data, capsys, monkeypatch):
    argv = ["plan", "balance", "--dataset", "visits", "--sa", "dept", "--categories",
            "a,b,c,d", "--rho1", "0.3", "--rho2", "0.6", "--json"]  # fmt: skip
    code, out, err = run(capsys, monkeypatch, argv)
    assert code == 0, err
    plan = json.loads(out)
    assert plan["feasible"] and "4,000 rows" in plan["basis"]
    code, out, err = run(capsys, monkeypatch, argv, "analyst")
    assert code == 2 and "--rows N" in err and err.count("\n") == 1
    code, out, err = run(capsys, monkeypatch, [*argv, "--rows", "4000"], "analyst")
    assert code == 0 and json.loads(out)["expected_error"] == plan["expected_error"]
    code, out, err = run(capsys, monkeypatch,
                         [*argv[:-5], "--rho1", "0.3", "--target-error", "0.05", "--json"])  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["rho2"] is not None


def test_budget_plan_saved_without_charge_then_releases_read_against_it(data, capsys, monkeypatch):
    base = ["plan", "budget", "--dataset", "visits"]
    code, out, err = run(capsys, monkeypatch, [*base[:2], "draft", *base[2:], "--item",
                                               "bounds:0.1", "--item", "sql:2x3", "--json"])  # fmt: skip
    assert code == 0, err
    draft = json.loads(out)
    assert [i["fits"] for i in draft["items"]] == [True, False]
    code, out, err = run(capsys, monkeypatch, [*base[:2], "save", *base[2:], "--name", "q3",
                                               "--item", "bounds:0.1", "--item", "sql:2"])  # fmt: skip
    assert code == 0 and "nothing charged" in out
    assert Registry().spent("visits") == (0.0, 0.0)
    code, out, err = run(capsys, monkeypatch, ["plan", "bounds", "--dataset", "visits",
                                               "--column", "amount", "--epsilon", "0.1"])  # fmt: skip
    assert code == 0, err
    code, out, err = run(capsys, monkeypatch, [*base[:2], "show", *base[2:], "--json"], "analyst")
    shown = json.loads(out)
    assert [r["status"] for r in shown["releases"]] == ["as planned"]
    assert shown["plans"][0]["items"][0]["used"] == 1
    code, out, err = run(capsys, monkeypatch, [*base[:2], "save", *base[2:], "--name", "x",
                                               "--item", "sql:1"], "analyst")  # fmt: skip
    assert code == 2 and "for the data owner" in err


def test_each_release_says_where_it_stands_against_the_plan(data, capsys, monkeypatch):
    """Right after a release, the CLI says "as planned" or "beyond the plan" (text and JSON),
    also to an analyst."""
    query = (
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 0.5, delta = 1e-7, "
        "max_groups_contributed = 1) dept, ANON_COUNT(*, 5) AS n FROM visits GROUP BY dept"
    )
    sql = ["sql", "--dataset", "visits", "--json", "--query", query]
    code, out, err = run(capsys, monkeypatch, sql, "analyst")
    assert code == 0, err
    assert json.loads(out)["registry"]["plan"]["status"] == "no plan"
    code, out, err = run(capsys, monkeypatch, ["plan", "budget", "save", "--dataset", "visits",
                                               "--name", "q4", "--item", "sql:0.5/1e-7"])  # fmt: skip
    assert code == 0, err
    places = []
    for _ in range(2):
        code, out, err = run(capsys, monkeypatch, sql, "analyst")
        assert code == 0, err
        places.append(json.loads(out)["registry"]["plan"])
    assert [p["status"] for p in places] == ["as planned", "beyond the plan"]
    assert places[0]["sentence"].startswith("As planned: item 'sql' of budget plan #")
    code, out, err = run(capsys, monkeypatch, [a for a in sql if a != "--json"], "analyst")
    assert code == 0, err
    assert "Beyond the plan: no item of budget plan #" in out


def test_bounds_is_a_charged_release_with_its_own_tool(data, capsys, monkeypatch):
    argv = ["plan", "bounds", "--dataset", "visits", "--column", "amount", "--epsilon", "0.3",
            "--json"]  # fmt: skip
    code, out, err = run(capsys, monkeypatch, argv, "analyst")
    assert code == 0, err
    got = json.loads(out)
    assert got["lower"] == 0 and got["upper"] >= 64 and got["registry"]["epsilon_charged"] == 0.3
    (record,) = Registry().releases("visits")
    assert record.tool == "bounds" and record.artefact["upper"] == got["upper"]
    assert SENTINEL not in out


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["plan"], "needs what to plan"),
        (
            ["plan", "release", BBOX, "--method", "ug", "--target-mre", "-1", "--public-n", "100"],
            "--target-mre",
        ),
        (
            [
                "plan",
                "release",
                BBOX,
                "--method",
                "nosuch",
                "--target-mre",
                "0.1",
                "--public-n",
                "100",
            ],
            "unknown method",
        ),
        (
            [
                "plan",
                "sql",
                "--table",
                "t=nosuch.csv",
                "--uid",
                "u",
                "--query",
                "x",
                "--target",
                "a=1",
            ],
            "nosuch.csv",
        ),
        (["plan", "balance", "--rows", "100", "--target-error", "0.02"], "public domain"),
        (
            ["plan", "balance", "--rows", "100", "--categories", "a,b", "--target-error", "2"],
            "--target-error",
        ),
        (["plan", "budget", "draft", "--item", "sql:1"], "--dataset NAME"),
        (["plan", "budget", "draft", "--dataset", "visits", "--item", "nope:1"], "unknown tool"),
        (
            ["plan", "bounds", "--dataset", "visits", "--column", "amount", "--clip-share", "0.9"],
            "--clip-share",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(data, capsys, monkeypatch, argv, words):
    code, out, err = run(capsys, monkeypatch, argv)
    assert code == 2
    assert words in err and err.count("\n") == 1
    assert Registry().releases() == []


def test_analyst_may_not_give_files(data, capsys, monkeypatch):
    code, out, err = run(capsys, monkeypatch,
                         ["plan", "release", str(data), BBOX, "--target-mre", "0.1"], "analyst")  # fmt: skip
    assert code == 2 and "registered datasets only" in err
