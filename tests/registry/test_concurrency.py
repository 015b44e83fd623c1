"""Concurrent `dpx` processes charging one dataset can never overspend its budget."""

import json
import os
import subprocess
import sys
from pathlib import Path

from core.registry import Registry, RunKind
from tests.registry.helpers import BBOX, write_points

DPX = str(Path(sys.executable).parent / "dpx")


def test_eight_concurrent_processes_against_a_budget_of_five(registry_dir, tmp_path):
    points = write_points(tmp_path / "pts.csv")
    env = {**os.environ, "DPX_REGISTRY": str(registry_dir)}
    add = subprocess.run(
        [DPX, "dataset", "add", "pts", "--table", f"t={points}", "--uid", "uid", "--epsilon", "5"],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert add.returncode == 0, add.stderr
    procs = [
        subprocess.Popen(
            [
                DPX,
                "htf",
                "--dataset",
                "pts",
                "--max-points-per-person",
                "1",
                BBOX,
                "--epsilon",
                "1",
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )  # fmt: skip
        for _ in range(8)
    ]
    results = [(p.wait(timeout=300), *p.communicate()) for p in procs]
    ok = [json.loads(out) for code, out, _ in results if code == 0]
    refused = [err for code, _, err in results if code == 2]
    assert len(ok) == 5 and len(refused) == 3, [err for _, _, err in results]
    assert all("privacy budget of dataset 'pts' exceeded" in err for err in refused)
    assert sorted(o["registry"]["release_id"] for o in ok) == sorted(
        {o["registry"]["release_id"] for o in ok}
    )
    reg = Registry(registry_dir)
    assert reg.spent("pts") == (5.0, 0.0)
    assert len(reg.releases("pts", RunKind.RELEASE)) == 5
    assert len(reg.refusals("pts")) == 3
