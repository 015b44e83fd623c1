""" "Recommended (private choice)" on the location-histograms page: the choice, its reasons, and
the one-line pointer to the benchmarks that say when the paper's HTF is not (issues 10, 32)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.spatial.methods import LABELS

# The measured answer to "which method when?" lives in the documentation, not on every page
# (issue 32: a 250-word info box sat on every location page, analysts' included).
BENCHMARKS_DOC = "docs/benchmarks/htf.md"
RECOMMENDED_DOC = "docs/benchmarks/recommended.md"
BENCHMARKS_LINE = (
    "Which method is most accurate where, measured on 15 point sets: "
    f"`{BENCHMARKS_DOC}`; how Recommended compares with every fixed method, including where "
    f"one does better: `{RECOMMENDED_DOC}` (documentation site, `make docs`: Benchmarks)."
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
