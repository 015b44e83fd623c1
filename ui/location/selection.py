""" "Recommended (private choice)" on the location-histograms page: the choice, its reasons, and
the measured table that says when the paper's HTF is not the best choice (issue 10)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.spatial.methods import LABELS

# Measured on the benchmark grid (bench/htf_regret.py, 20 repetitions) and, for Recommended's
# current rules, on design and held-out point sets (issue 20; docs/benchmarks/htf.md).
WHEN_NOT_HTF = (
    "**When is the paper's HTF the best choice?** On our benchmark grid (15 point sets: single "
    "Gaussian clusters and a city mixture at 10k–1M points, GeoNames places world / Europe, US "
    "airports, US ZIP centroids; ε 0.1, 0.5, 1.0; 20 repetitions) HTF (even with its "
    "improvements, `htf+`) was never the best: AG won on every real point set and on the "
    "multi-cluster city mixture (26 of 45 cells), PrivTree on single clusters (19 of 45); the "
    "better HTF variant was 1.6–73× worse than the winner (median 4.6×). The paper's setting "
    "where HTF beats the grids (a million points in one tight cluster) is real, but PrivTree is "
    "better there too. **Recommended (private choice)** spends 5 % of ε on a noisy N (the "
    "share UG and AG spend anyway, handed on to them). Below 330 points per unit of noise it "
    "measures nothing else and builds UG with the rest: there it is UG alone. Above, it spends "
    "5 % more on the shape — 4 × 4 noisy counts below 1,200 points per unit of noise, 16 × 16 "
    "noisy counts and the number of occupied cells above — then builds UG, AG, PrivTree or "
    "DAWA with the rest. Against the best of UG, AG, PrivTree, DAWA, HB and QuadTree in "
    "hindsight (20 repetitions): median 1.02–1.11×, worst 1.11–1.41× on the five collections "
    "its rules were fitted on; on a sixth they never saw (forest fires, galaxies, trees, cancer "
    "cases, TB farms, gorilla nests, house sales, cycle-hire docks), median 1.09×, worst 1.31× "
    "(gorilla nests at ε 0.1, 647 points: UG alone, 1.31× behind DAWA), worse than UG in 4 of "
    "20 cells by at most 1.24×."
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
        f"(drawn by its own mechanism, part of its total) and ε = {sel.epsilon_build:.4g} on the histogram."
    )
    feats = sel.features
    n_scale = sel.noise_scales.get("n")  # None: a declared public size, nothing spent on N
    rows = [
        {"feature": "declared public N" if n_scale is None else "noisy N",
         "value": f"{feats.noisy_n:,.0f}", "noise scale": n_scale or 0.0},
        {"feature": "points per unit of noise (noisy N × the histogram's ε / K)",
         "value": f"{feats.signal:,.0f}", "noise scale": None},
    ]  # fmt: skip
    st.dataframe(pd.DataFrame(rows), hide_index=True)
