""" "Recommended (private choice)" on the location-histograms page: the choice, its reasons, and
the one-line pointer to the benchmarks that say when the paper's HTF is not (issues 10, 32)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.spatial.methods import LABELS

# The measured answer to "which method when?" lives in the documentation, not on every page
# (issue 32: a 250-word info box sat on every location page, analysts' included).
BENCHMARKS_DOC = "docs/benchmarks/htf.md"
BENCHMARKS_LINE = (
    "Which method is most accurate where, measured on 15 point sets: "
    f"`{BENCHMARKS_DOC}` (documentation site, `make docs`: Benchmarks → Location histograms)."
)


def show_selection(releases: dict) -> None:
    """If `auto` was built: what it chose, the rule that fired, and the noisy features."""
    rel = releases.get("auto")
    # TODO(spatial): `Release.info` is a dict; a typed `Release.selection` would let the page
    # read attributes only (the selection itself is typed).
    if rel is None or "selection" not in rel.info:
        return
    sel = rel.info["selection"]
    st.markdown(
        f"**Recommended (private choice) built {LABELS.get(sel.method, sel.method)}** — rule "
        f"*{sel.rule}*: {sel.condition}. It spent ε = {sel.epsilon:.4g} on noisy features "
        f"(drawn by its own mechanisms, part of its total) and ε = {sel.epsilon_build:.4g} on the histogram."
    )
    feats = sel.features
    n_scale = sel.noise_scales.get("n")  # None: a declared public size, nothing spent on N
    rows = [
        {"feature": "declared public N" if n_scale is None else "noisy N",
         "value": f"{feats.noisy_n:,.0f}", "noise scale": n_scale or 0.0},
        {"feature": "points per unit of noise (noisy N × ε / K, less the selection's full share)",
         "value": f"{feats.signal:,.0f}", "noise scale": None},
    ]  # fmt: skip
    if feats.top_quarter is None:  # below VERY_LOW_SIGNAL only N is measured
        rows.append({"feature": "shape (coarse counts)",
                     "value": "not measured: too few points per unit of noise, UG whatever it is",
                     "noise scale": None})  # fmt: skip
        st.dataframe(pd.DataFrame(rows), hide_index=True)
        return
    coarse = sel.noise_scales["coarse_counts"]
    grid = f"{sel.coarse_grid[0]} × {sel.coarse_grid[1]}"
    rows += [
        {"feature": f"mass share of the densest quarter of the {grid} coarse cells",
         "value": f"{feats.top_quarter:.3f}", "noise scale": coarse},
        {"feature": f"mass share of the densest 1/16 of the {grid} coarse cells",
         "value": f"{feats.top_share:.3f}", "noise scale": coarse},
        {"feature": "clearly non-empty coarse cells (fraction)",
         "value": f"{feats.occupied:.3f}", "noise scale": coarse},
        {"feature": "dispersion of the clearly non-empty coarse cells (share of the side)",
         "value": f"{feats.dispersion:.3f}", "noise scale": coarse},
    ]  # fmt: skip
    if feats.points_per_cell is not None:  # measured from 1,200 points per unit of noise up
        rows += [
            {"feature": "occupied cells of the release's grid (noisy number)",
             "value": f"{max(feats.noisy_cells or 0.0, 0):,.0f}",
             "noise scale": sel.noise_scales["occupied_cells"]},
            {"feature": "points per occupied cell (at least; noisy N / raised noisy cells)",
             "value": f"{feats.points_per_cell:,.1f}", "noise scale": None},
        ]  # fmt: skip
    st.dataframe(pd.DataFrame(rows), hide_index=True)
