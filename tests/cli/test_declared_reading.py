"""Issue 27 (item 2, every tool): a registered table is read into its declared schema by the
location and PP tools too, never by a reader that infers from the values. An attacker's test:
two neighbouring CSV files that differ in one line only — a line with an extra field, with bytes
that are not UTF-8, or with a value that would change an inferred column type — registered as
two datasets. Every release (location release and pilot, PP publication streamed from the file)
must have the same outcome on both: released, the same charge, and with the same seed the very
same output apart from the one row's own contribution. A reader that fails on the neighbour's
line fails after the charge: ε spent for nothing and one bit (the line exists) told.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from core.cli import main
from core.registry import Registry
from tests.cli.conftest import run_dpx

BBOX = "--bbox=-118.5,33.7,-117.9,34.3"
N = 300
LINE = 200  # where the neighbour's extra line sits
ODD_LINES = {
    "extra-field": b"p7,34.0,-118.2,A,surplus",
    "not-utf8": b"p7,34.0,-118.2,\xff\xfe",
    "type-changing": b"p7,34.0,-118.2,2.5",
}


def _base() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    return pd.DataFrame(
        {
            "person": [f"p{i}" for i in rng.integers(0, 60, N)],
            "lat": (34.0 + rng.normal(0, 0.05, N)).round(6),
            "lon": (-118.2 + rng.normal(0, 0.05, N)).round(6),
            "sa": rng.integers(1, 4, N),  # small integers: an inferring reader types them
        }
    )


@pytest.fixture(params=list(ODD_LINES))
def files(request, tmp_path, registry_dir, capsys):
    """'d' (the base) and 'd_prime' (one odd line more), each registered with the schema the
    base proposes (the declared schema both datasets share: sa is declared an integer)."""
    text = _base().to_csv(index=False).encode()
    lines = text.splitlines()
    odd = lines[:LINE] + [ODD_LINES[request.param]] + lines[LINE:]
    base_path = tmp_path / "d.csv"
    base_path.write_bytes(text)
    schema = tmp_path / "schema.json"
    assert main(["dataset", "add", "d", "--table", f"t={base_path}", "--epsilon", "20",
                 "--uid", "person", "--max-rows", f"t={10 * N}"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["dataset", "schema", "d", "--json"]) == 0
    schema.write_text(json.dumps(json.loads(capsys.readouterr().out)["schemas"]["t"]))
    prime_path = tmp_path / "d_prime.csv"
    prime_path.write_bytes(b"\n".join(odd) + b"\n")
    assert main(["dataset", "add", "d_prime", "--table", f"t={prime_path}", "--epsilon", "20",
                 "--uid", "person", "--schema", f"t={schema}"]) == 0  # fmt: skip
    capsys.readouterr()
    assert Registry().dataset("d").schema("t") == Registry().dataset("d_prime").schema("t")
    return request.param


COMMANDS = {
    "release": ["release", "--method", "ug", BBOX, "--grid", "32", "--epsilon", "1",
                "--max-points-per-person", "3", "--json"],
    "plan release": ["plan", "release", BBOX, "--grid", "32", "--max-points-per-person", "3",
                     "--method", "ug", "--target-mre", "0.3", "--pilot-epsilon", "0.5", "--json"],
    "balance": ["balance", "--sa", "sa", "--rho1", "0.45", "--rho2", "0.7", "--perturb",
                "--missing", "drop", "--categories", "1,2,3", "--json"],
}  # fmt: skip


@pytest.mark.parametrize("role", ["owner", "analyst"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_neighbour_with_one_odd_line_has_the_same_outcome_and_charge(
    files, capsys, monkeypatch, tmp_path, role, command
):
    outcomes = {}
    for name in ("d", "d_prime"):
        argv = [*COMMANDS[command], "--dataset", name]
        if command == "balance":
            argv += ["--out", str(tmp_path / f"{name}-{role}.csv")]
        code, out, err = run_dpx(capsys, monkeypatch, argv, role)
        assert "Traceback" not in err
        outcomes[name] = (code, Registry().spent(name), "after the charge" in err)
    assert outcomes["d"] == outcomes["d_prime"], (files, outcomes)
    assert outcomes["d"][0] == 0 and not outcomes["d"][2]


def test_the_published_labels_are_the_declared_type_s_whatever_one_line_holds(
    files, capsys, monkeypatch, tmp_path
):
    """PP publications of the two neighbours: the SA's labels are spelled as the declared integer
    type prints them ('1', never '1.0' because one line held 2.5)."""
    labels = {}
    for name in ("d", "d_prime"):
        out = tmp_path / f"pub-{name}.csv"
        argv = [*COMMANDS["balance"], "--dataset", name, "--out", str(out)]
        code, _, err = run_dpx(capsys, monkeypatch, argv, "owner")
        assert code == 0, err
        published = next(p for p in tmp_path.iterdir() if p.name.startswith(f"pub-{name}") and
                         p.suffix == ".csv")  # fmt: skip
        labels[name] = set(pd.read_csv(published, dtype=str)["sa"].dropna())
    assert labels["d"] <= {"1", "2", "3"} and labels["d_prime"] <= {"1", "2", "3"}
