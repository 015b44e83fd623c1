""" "Recommended (private choice)" on the location-histograms page: the choice, its reasons, and
the measured table that says when the paper's HTF is not the best choice (issue 10)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.spatial.methods import LABELS

# Measured on the benchmark grid (bench/htf_regret.py, 20 repetitions) and, for Recommended's
# current rules, per collection of point sets (issue 31; bench/recommended_regret.py,
# docs/benchmarks/recommended.md).
WHEN_NOT_HTF = (
    "**When is the paper's HTF the best choice?** On our benchmark grid (15 point sets: single "
    "Gaussian clusters and a city mixture at 10k–1M points, GeoNames places world / Europe, US "
    "airports, US ZIP centroids; ε 0.1, 0.5, 1.0; 20 repetitions) HTF (even with its "
    "improvements, `htf+`) was never the best: AG won on every real point set and on the "
    "multi-cluster city mixture (26 of 45 cells), PrivTree on single clusters (19 of 45); the "
    "better HTF variant was 1.6–73× worse than the winner (median 4.6×). The paper's setting "
    "where HTF beats the grids (a million points in one tight cluster) is real, but PrivTree is "
    "better there too. **Recommended (private choice)** spends 1 % of ε on a noisy N. Below 330 "
    "points per unit of noise it builds UG with the rest, sized by that N; otherwise PrivTree, "
    "the method with the lowest error on average across our collections of point sets. On a "
    "fresh collection no rule had seen (heavy places, boundary lines, a lattice, small "
    "ecological sets; 5 repetitions) it was 0.99× the best single fixed method (DAWA) in "
    "geometric-mean regret, its worst cell 1.54× the best in hindsight. A fixed method does "
    "better on spread places: on city lists, airports, tracks and check-ins AG alone was "
    "1.34–1.36× better (docs/benchmarks/recommended.md)."
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
