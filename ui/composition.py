"""Composition made visible on the Releases page (issue 33.5): a dataset's spend under basic and
pld accounting in one line, its cumulative ε at its total δ release by release (a chart and a
table), and a teaching view of how many releases a budget buys under each accounting.

Everything here reads released, public facts only (the registry's charges and recorded
mechanisms) or the person's own inputs — never data — so owner and analyst see the same.
The figures are `core.privacy.composition`'s; each expander computes only while open.
"""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from core.privacy import Cost, DiscreteGaussian, Laplace
from core.privacy.accounting import Accounting
from core.privacy.composition import (
    MAX_POINTS,
    ChargedRelease,
    CumulativePoint,
    cumulative,
    releases_that_fit,
)
from core.registry import Dataset, Registry
from core.viz.composition import composition_figure
from ui.state import persist

BUY_LIMIT = 10_000  # the teaching view says "at least" beyond this
NOISES = ("Laplace", "Gaussian")


@st.cache_data(show_spinner=False, max_entries=32)
def _cumulative(digest: str, _releases: tuple[ChargedRelease, ...], delta_total: float):
    """`cumulative`, cached by a digest of the releases' public facts (`digest`)."""
    return cumulative(_releases, delta_total)


def _digest(releases: list[ChargedRelease]) -> str:
    return hashlib.sha256(repr(releases).encode()).hexdigest()


def points_frame(points: list[CumulativePoint], delta_total: float) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "releases": p.count,
                "last release": f"#{p.id}",
                "ε basic (sum)": p.basic_epsilon,
                "δ basic (sum)": p.basic_delta,
                f"ε pld (at δ {delta_total:g})": p.pld_epsilon,
                "pld figure": p.pld_method,
            }
            for p in points
        ]
    )


def spend_both_ways(registry: Registry, d: Dataset) -> None:
    """One line: what the dataset has spent under basic and under pld, and which one holds."""
    basic = registry.composition(d.name, Accounting.BASIC)
    if not basic.count:
        return
    tight = registry.composition(d.name, Accounting.PLD)
    st.caption(
        f"Composed over {basic.count} mechanism(s): basic ε {basic.epsilon:.4g} "
        f"(δ {basic.delta:.3g}); pld ε {tight.epsilon:.4g} at δ {d.policy.delta_total:g}. "
        f"This dataset's accounting is **{d.accounting.value}**: its budget is charged by that "
        "figure."
    )


def composition_view(registry: Registry, d: Dataset) -> None:
    """The dataset's cumulative ε at its δ after each release, basic and pld (chart + table)."""
    key = f"rel_comp_{d.name}"
    box = st.expander(
        f"Composition release by release · {d.name}",
        key=persist(f"{key}_open", False),
        on_change="rerun",
    )
    with box:
        if not box.open:
            return
        releases = registry.charged_releases(d.name)
        if not releases:
            st.caption("No charged release yet: nothing has composed.")
            return
        delta_total = d.policy.delta_total
        with st.spinner("Composing with privacy loss distributions ..."):
            points = _cumulative(_digest(releases), tuple(releases), delta_total)
        st.caption(
            f"After each charged release: basic accounting's sum of ε, and pld's ε at the "
            f"dataset's total δ {delta_total:g} (privacy loss distributions; never above "
            f"basic). Computed from the recorded mechanisms only. This dataset is charged under "
            f"**{d.accounting.value}**."
            + (
                f" {len(releases)} releases: {len(points)} of them are plotted, the last always."
                if len(releases) > MAX_POINTS
                else ""
            )
        )
        st.plotly_chart(
            composition_figure(points, delta_total, d.policy.epsilon_total),
            key=f"{key}_chart",
        )
        st.dataframe(points_frame(points, delta_total), hide_index=True, key=f"{key}_table")


def per_release(noise: str, epsilon: float, delta: float):
    """The one mechanism of the teaching view's release: a count (sensitivity 1) with Laplace
    noise at ε, or discrete Gaussian noise at (ε, δ)."""
    if noise == "Gaussian":
        return DiscreteGaussian("count", sensitivity=1.0, epsilon=epsilon, delta=delta)
    return Laplace("count", sensitivity=1.0, epsilon=epsilon)


@st.cache_data(show_spinner=False, max_entries=64)
def bought(noise: str, epsilon: float, delta: float, total_eps: float, total_delta: float):
    """(basic, pld) counts of releases that fit a fresh budget (at most `BUY_LIMIT`)."""
    m, budget = per_release(noise, epsilon, delta), Cost(total_eps, total_delta)
    return tuple(releases_that_fit(m, budget, a, limit=BUY_LIMIT) for a in Accounting)


def releases_bought_view() -> None:
    """Teaching: how many releases of one DP SQL COUNT a budget buys under each accounting."""
    box = st.expander(
        "How many releases does a budget buy? (teaching)",
        key=persist("rel_buy_open", False),
        on_change="rerun",
    )
    with box:
        if not box.open:
            return
        st.caption(
            "A DP SQL COUNT per release (sensitivity 1, public groups: no threshold), against "
            "a fresh dataset budget (ε, δ). Basic accounting adds the ε (and δ) of every "
            "release; pld composes them with privacy loss distributions (Gaussians in zCDP) "
            "and states ε at the budget's δ. Reads no data."
        )
        c1, c2, c3 = st.columns(3)
        noise = c1.radio("Noise", NOISES, key=persist("rel_buy_noise", NOISES[0]))
        eps = c2.number_input(
            "ε per release", min_value=0.01, max_value=5.0, step=0.05, format="%g",
            key=persist("rel_buy_eps", 0.1),
        )  # fmt: skip
        delta = c3.number_input(
            "δ per release (Gaussian)", min_value=1e-12, max_value=1e-3, format="%g",
            key=persist("rel_buy_delta", 1e-8), disabled=noise != "Gaussian",
        )  # fmt: skip
        b1, b2 = st.columns(2)
        total_eps = b1.number_input(
            "Budget ε", min_value=0.01, max_value=100.0, step=1.0, format="%g",
            key=persist("rel_buy_total_eps", 10.0),
        )  # fmt: skip
        total_delta = b2.number_input(
            "Budget δ", min_value=0.0, max_value=1e-2, format="%g",
            key=persist("rel_buy_total_delta", 1e-6),
        )  # fmt: skip
        with st.spinner("Searching with the accountant ..."):
            basic, pld = bought(noise, float(eps), float(delta), float(total_eps),
                                float(total_delta))  # fmt: skip
        shown = {n: f"at least {n:,}" if n >= BUY_LIMIT else f"{n:,}" for n in (basic, pld)}
        m1, m2 = st.columns(2)
        m1.metric("releases · basic", shown[basic])
        m2.metric("releases · pld", shown[pld])
        if basic:
            st.caption(
                f"pld buys {pld / basic:.3g}× basic's releases here. "
                + (
                    "With budget δ 0 there is no slack for the distributions: pld equals basic."
                    if total_delta == 0
                    else ""
                )
            )
        else:
            st.caption("One release alone does not fit this budget.")
