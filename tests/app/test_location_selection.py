"""The page's "Recommended built ..." panel (issue 20, rounds 4-6): the noisy N, then the shape
features the band bought (none below 330 points per unit of noise, 4 x 4 counts below 1,200,
16 x 16 counts and the occupied cells from it)."""

import pytest
from streamlit.testing.v1 import AppTest

SCRIPT = """
import numpy as np
from core.privacy import Accountant, Cost, Noise
from core.spatial.selection import build_auto
from ui.location.selection import show_selection
rng = np.random.default_rng(0)
F = np.zeros((64, 64), dtype=np.int64)
np.add.at(F, (rng.integers(0, 64, {n}), rng.integers(0, 64, {n})), 1)
rel = build_auto(F, 0.5, Accountant(Noise.seeded(1), Cost(0.5)))
show_selection({{"auto": rel}})
"""


@pytest.mark.parametrize("n", [2_000, 20_000])
def test_selection_panel_lists_the_shape_at_low_and_high_signal(n):
    """2,000 points at eps 0.5: 900 points per unit of noise (4 x 4 counts, no occupied cells);
    20,000: 9,000 (16 x 16 counts and the occupied cells)."""
    at = AppTest.from_string(SCRIPT.format(n=n), default_timeout=60).run()
    assert not at.exception, at.exception
    features = list(at.dataframe[0].value["feature"])
    assert features[0] == "noisy N"
    assert any("densest 1/16" in f for f in features)
    assert any("dispersion" in f for f in features)
    grid = "4 × 4" if n == 2_000 else "16 × 16"
    assert any(f"densest quarter of the {grid} coarse cells" in f for f in features)
    assert any("points per occupied cell" in f for f in features) == (n == 20_000)
    assert not any("bought none" in c.value for c in at.caption)


def test_selection_panel_says_the_shape_was_not_measured_at_very_low_signal():
    """500 points at eps 0.5: 225 points per unit of noise, below 330: only N is measured."""
    at = AppTest.from_string(SCRIPT.format(n=500), default_timeout=60).run()
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert list(table["feature"])[0] == "noisy N"
    assert not any("densest" in f for f in table["feature"])
    assert any(v.startswith("not measured") for v in table["value"])
