"""The page's "Recommended built ..." panel (issue 31, round 7): the noisy N and the points per
unit of noise read from it, whatever was built (no shape is measured any more)."""

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


@pytest.mark.parametrize(("n", "built"), [(500, "UG"), (20_000, "PrivTree")])
def test_selection_panel_lists_the_noisy_n_and_the_signal(n, built):
    """500 points at eps 0.5: about 250 points per unit of noise, below 330 (UG); 20,000: about
    9,900 (PrivTree). Either way the panel lists exactly what was measured: N."""
    at = AppTest.from_string(SCRIPT.format(n=n), default_timeout=60).run()
    assert not at.exception, at.exception
    features = list(at.dataframe[0].value["feature"])
    assert features[0] == "noisy N" and len(features) == 2
    assert "points per unit of noise" in features[1]
    assert built in at.markdown[0].value
