"""Issue 28: `dpx balance --perturb` makes every check that needs no private data before the
charge. An analyst who does not say what happens to missing SA values is refused before
anything is charged — on a table with missing values and on its neighbour without any alike
(whether values are missing is private) — instead of being charged ε for a failure, three
tries in a row. A failure after the charge is then a fault of ours, and says so."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.balancing.precharge import missing_policy, must_declare_missing
from core.cli import main
from core.errors import InputError
from core.registry import Registry
from tests.cli.conftest import run_dpx

N = 600


@pytest.fixture
def stops(tmp_path, registry_dir, capsys):
    """Two neighbouring datasets: 'stops' has one record whose race is missing, 'stops_full'
    is the same table with that record's race filled in."""
    rng = np.random.default_rng(11)
    frame = pd.DataFrame(
        {
            "person": np.arange(N),
            "race": rng.choice(["a", "b", "c", "d"], N, p=[0.5, 0.3, 0.15, 0.05]).astype(object),
            "precinct": rng.integers(1, 5, N),
        }
    )
    full = frame.copy()
    frame.loc[17, "race"] = None
    for name, table in (("stops", frame), ("stops_full", full)):
        path = tmp_path / f"{name}.csv"
        table.to_csv(path, index=False)
        argv = ["dataset", "add", name, "--table", f"t={path}", "--uid", "person",
                "--epsilon", "10", "--delta", "1e-3", "--pp-columns", "precinct"]  # fmt: skip
        assert main(argv) == 0
    capsys.readouterr()
    return tmp_path


def _argv(name: str, out, *extra: str) -> list[str]:
    return ["balance", "--dataset", name, "--sa", "race", "--rho1", "0.3", "--rho2", "0.6",
            "--perturb", "--out", str(out), *extra]  # fmt: skip


@pytest.mark.parametrize("name", ["stops", "stops_full"])
def test_analyst_without_missing_is_refused_before_the_charge(stops, capsys, monkeypatch, name):
    for attempt in range(3):  # the three tries: nothing is spent on any of them
        out = stops / f"x{attempt}.csv"
        code, stdout, err = run_dpx(capsys, monkeypatch, _argv(name, out), "analyst")
        assert code == 2 and stdout == "" and err.count("\n") == 1, err
        assert "--missing drop" in err and "Nothing was charged" in err
        assert "Traceback" not in err and "missing value(s)" not in err  # no count, no look
        assert Registry().spent(name) == (0.0, 0.0)
        assert not out.exists()
    assert [r.status for r in Registry().releases(name)] == []


def test_analyst_neighbours_with_a_declared_policy_have_the_same_outcome_and_charge(
    stops, capsys, monkeypatch
):
    outcomes = []
    for name in ("stops", "stops_full"):
        argv = _argv(name, stops / f"out_{name}.csv", "--missing", "drop", "--columns", "precinct")
        code, _, err = run_dpx(capsys, monkeypatch, argv, "analyst")
        assert code == 0, err
        outcomes.append(Registry().spent(name))
    assert outcomes[0] == outcomes[1] and outcomes[0][0] == pytest.approx(1.0)


def test_owner_is_asked_before_the_charge_when_the_sa_has_missing_values(
    stops, capsys, monkeypatch
):
    code, _, err = run_dpx(capsys, monkeypatch, _argv("stops", stops / "o.csv"), "owner")
    assert code == 2 and err.count("\n") == 1
    assert "1 missing value(s)" in err and "Nothing was charged" in err
    assert Registry().spent("stops") == (0.0, 0.0)
    # the owner's table without missing values needs no answer (the owner may look)
    code, _, err = run_dpx(capsys, monkeypatch, _argv("stops_full", stops / "f.csv"), "owner")
    assert code == 0, err


def test_a_column_that_may_not_be_published_is_refused_before_the_charge(
    stops, capsys, monkeypatch, tmp_path
):
    path = stops / "stops.csv"
    argv = ["balance", str(path), "--sa", "race", "--rho1", "0.3", "--rho2", "0.6", "--perturb",
            "--out", str(tmp_path / "c.csv"), "--missing", "drop",
            "--columns", "person,nope"]  # fmt: skip
    before = Registry().releases()
    code, _, err = run_dpx(capsys, monkeypatch, argv, "owner")
    assert code == 2 and err.count("\n") == 1 and "nope" in err
    assert "stands" not in err  # no charge to stand: refused before it
    assert Registry().releases() == before


@pytest.mark.parametrize("role", ["analyst", "owner"])
def test_a_failure_after_the_charge_is_reported_as_a_fault_of_ours(
    stops, capsys, monkeypatch, role
):
    def broken(*_args, **_kwargs):
        raise RuntimeError("injected fault after the charge")

    monkeypatch.setattr("core.cli.balance._publish", broken)
    argv = _argv("stops", stops / "y.csv", "--missing", "category")
    code, stdout, err = run_dpx(capsys, monkeypatch, argv, role)
    assert code == 2 and stdout == "" and err.count("\n") == 1, err
    assert "fault in DP Explorer" in err and "not in your request" in err
    assert "injected" not in err and "Traceback" not in err
    assert "stands" in err  # the charge made before the failure is kept, and said so
    assert Registry().spent("stops")[0] == pytest.approx(1.0)
    (release,) = Registry().releases("stops")
    assert release.status.value == "failed"


def test_the_rule_for_an_analyst_never_looks_at_the_data():
    def private() -> int:
        raise AssertionError("the analyst's rule counted the missing values")

    assert must_declare_missing(True, private)
    for declared in ("drop", "category"):
        assert missing_policy(declared, analyst=True, sa="race", count_missing=private) == declared
    with pytest.raises(InputError, match="--missing drop"):
        missing_policy("error", analyst=True, sa="race", count_missing=private)
    assert missing_policy("error", analyst=False, sa="race", count_missing=lambda: 0) == "error"
    assert not must_declare_missing(False, lambda: 0) and must_declare_missing(False, lambda: 2)
