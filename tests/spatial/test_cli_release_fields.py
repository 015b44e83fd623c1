"""`dpx htf --json` shows what spec §7 asks of every release: mechanisms, parameters, the
record-level privacy unit and the mode (audit regression test)."""

import json

import numpy as np
import pandas as pd

from core.cli import main


def test_htf_json_states_privacy_unit_and_parameters(tmp_path, capsys):
    rng = np.random.default_rng(1)
    path = tmp_path / "pts.csv"
    pd.DataFrame(
        {"lat": rng.uniform(34.0, 34.1, 500), "lon": rng.uniform(-118.3, -118.2, 500)}
    ).to_csv(path, index=False)
    argv = ["htf", str(path), "--bbox", "-118.3,34.0,-118.2,34.1", "--grid", "16",
            "--epsilon", "1", "--T", "4", "--stop-count", "30", "--seed", "5", "--json"]  # fmt: skip
    assert main(argv) == 0
    res = json.loads(capsys.readouterr().out)
    assert "neighbouring datasets differ by one point" in res["privacy_unit"]
    assert res["params"]["T"] == 4 and res["params"]["stop_count"] == 30
    assert res["mode"] == "seeded" and "not for real releases" in res["noise"]["warning"]
    # spec §7: the mechanisms' shares of the cost add up to what was used, within epsilon
    rows = res["mechanisms"]
    assert all({"kind", "label", "epsilon", "sensitivity", "scale"} <= set(r) for r in rows)
    assert sum(r["charged_epsilon"] for r in rows) <= 1 + 1e-12
    assert res["unit"] == {"kind": "point", "max_points": 1, "text": res["unit"]["text"]}
