"""The PP page's inputs: the sensitive attribute, (ρ1, ρ2), missing values and the options —
one typed `PPSettings` (`ui.pp.params`) — and the partition plan they give (pure, cached)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.balancing.demos import DEMO_SETTINGS
from core.balancing.params import parse_rho
from core.balancing.plan import PartitionPlan, plan_partition
from core.balancing.precharge import must_declare_missing
from core.balancing.records import MISSING_LABEL, check_categorical, encode_sa
from core.balancing.report import MERGE_LABEL
from ui.data import DataChoice, Source
from ui.pp.params import PPSettings
from ui.shell import is_analyst
from ui.state import kept, persist

RHO_HELP = (
    "An attacker's belief about any protected value may rise from at most ρ1 to at most ρ2. "
    "Type a decimal (0.3) or a fraction (1/3); values are used exactly."
)
MISSING_CHOICES = ["drop those records", f"count them as the category {MISSING_LABEL}"]


def choose_settings(choice: DataChoice, df: pd.DataFrame) -> PPSettings:
    demo = choice.demo.name if choice.source is Source.DEMO and choice.demo else None
    sa_default, rho1_default, rho2_default = DEMO_SETTINGS.get(demo, (None, "1/3", "2/3"))
    unit = choice.dataset.uid if choice.dataset is not None else None
    columns = [str(c) for c in df.columns if str(c) != unit]  # the unit is never the SA
    c1, c2, c3 = st.columns([2, 1, 1])
    sa = c1.selectbox(
        "Sensitive attribute (SA) column", columns, persist_state="session",
        key=kept(f"pp_sa_{choice.key}", columns,
                 sa_default if sa_default in columns else columns[-1]),
    )  # fmt: skip
    rho1 = c2.text_input(
        "ρ1 (prior bound)", persist_state="session", help=RHO_HELP,
        key=persist(f"pp_rho1_{choice.key}", rho1_default),
    )  # fmt: skip
    rho2 = c3.text_input(
        "ρ2 (posterior bound)", persist_state="session", help=RHO_HELP,
        key=persist(f"pp_rho2_{choice.key}", rho2_default),
    )  # fmt: skip
    st.caption(
        f"ρ1 = {rho1}, ρ2 = {rho2}: an attacker's belief about any protected value may rise "
        "from at most ρ1 to at most ρ2."
    )
    check_categorical(df[sa])  # before anything is computed: a continuous column is refused
    missing = _missing_choice(df, sa)
    tie, merge = _options()
    settings = PPSettings(choice.key, sa, rho1, rho2, missing, tie, merge)
    settings.rho_values  # noqa: B018 - a bad ρ is refused here, in one line
    return settings


def _missing_choice(df: pd.DataFrame, sa: str) -> str:
    """The missing-value policy, asked before anything is charged by the rule the CLI applies
    (`core.balancing.precharge`): an analyst always (whether values are missing is private,
    so the data is not even counted), the owner when the SA has missing values."""
    analyst = is_analyst()
    n_missing = 0 if analyst else int(df[sa].isna().sum())
    if not must_declare_missing(analyst, lambda: n_missing):
        return "error"
    question = (
        f"If '{sa}' has missing values, what should happen to them?"
        if analyst
        else f"'{sa}' has {n_missing} missing value(s). What should happen to them?"
    )
    choice = st.radio(
        question, MISSING_CHOICES, index=None, persist_state="session", key=persist("pp_missing")
    )
    if choice is None:
        st.warning("Choose how to handle the missing values to continue (the choice is recorded).")
        st.stop()
    return "drop" if choice.startswith("drop") else "category"


def _options() -> tuple[str, str]:
    with st.expander("Options"):
        tie = st.radio(
            "Tie policy", ["stable", "value_order"], horizontal=True, persist_state="session",
            key=persist("pp_tie", "stable"),
            help="stable: re-sort the previous order (reproduces the thesis); value_order: "
            "re-sort from the canonical order each iteration. Only group contents can differ.",
        )  # fmt: skip
        merge = st.radio(
            "Phase 2 merging", ["none", "utility"], horizontal=True, persist_state="session",
            key=persist("pp_merge", "none"), help=f"utility is {MERGE_LABEL}. Off by default.",
        )  # fmt: skip
        if merge == "utility":
            st.info(f"Merging is **this project's design**, not the thesis's: {MERGE_LABEL}.")
    return tie, merge


def plan_for(df: pd.DataFrame, s: PPSettings) -> tuple[PartitionPlan, dict[str, int]]:
    """The EXACT partition plan of the SA's counts and those counts: the owner's teaching and
    evaluation view, never a release (a publication plans from noisy counts) and never shown
    to an analyst."""
    counts = encode_sa(df[s.sa], missing=s.missing).counts()
    return _plan(tuple(counts.items()), s.rho1, s.rho2, s.tie, s.merge), counts


@st.cache_data(show_spinner="Balancing…", max_entries=16, ttl=3600)
def _plan(counts: tuple, rho1: str, rho2: str, tie: str, merge: str) -> PartitionPlan:
    return plan_partition(
        dict(counts), parse_rho(rho1, "ρ1"), parse_rho(rho2, "ρ2"), tie_policy=tie,
        merge_policy=merge,
    )  # fmt: skip
