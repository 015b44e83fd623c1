"""The page's "Recommended built ..." panel for both stages of the private choice (issue 20):
with coarse counts it lists the shape features, without them it says none were bought."""

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


@pytest.mark.parametrize("n, coarse", [(500, False), (20_000, True)])
def test_selection_panel_for_both_stages(n, coarse):
    """500 points at eps 0.5: 237 points per unit of noise, no coarse counts; 20,000: 9,500."""
    at = AppTest.from_string(SCRIPT.format(n=n), default_timeout=60).run()
    assert not at.exception, at.exception
    features = list(at.dataframe[0].value["feature"])
    assert features[0] == "noisy N"
    assert any("densest 1/16" in f for f in features) is coarse
    assert any("bought none" in c.value for c in at.caption) is (not coarse)
