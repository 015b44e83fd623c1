"""The page's "Recommended built ..." panel (issue 20, rounds 4-5): the noisy N, the shape
features of the 16 x 16 counts and the occupied cells, all bought at every signal level."""

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


@pytest.mark.parametrize("n", [500, 20_000])
def test_selection_panel_lists_the_shape_at_low_and_high_signal(n):
    """500 points at eps 0.5: 225 points per unit of noise (4 x 4 counts, no occupied cells);
    20,000: 9,000 (16 x 16 counts and the occupied cells)."""
    at = AppTest.from_string(SCRIPT.format(n=n), default_timeout=60).run()
    assert not at.exception, at.exception
    features = list(at.dataframe[0].value["feature"])
    assert features[0] == "noisy N"
    assert any("densest 1/16" in f for f in features)
    assert any("dispersion" in f for f in features)
    grid = "4 × 4" if n == 500 else "16 × 16"
    assert any(f"densest quarter of the {grid} coarse cells" in f for f in features)
    assert any("points per occupied cell" in f for f in features) == (n == 20_000)
    assert not any("bought none" in c.value for c in at.caption)
