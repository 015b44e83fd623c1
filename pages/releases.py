"""Releases: every registered dataset's budget, the list of releases, a report per release.

A report is built only for the release chosen in the picker (not for every listed release on
every rerun), and a report that fails to build shows one line for that release: the page goes on.

Reads the registry (`DPX_REGISTRY`, else `~/.dpx`); its one write is a budget plan the owner
saves (`ui.plan.budget`: it charges nothing). Each dataset's composition under basic and pld,
release by release, and a teaching view of how many releases a budget buys under each are
`ui.composition`'s (public facts only). Budgets are set by the owner with
`dpx dataset budget`, not from a page. Each listed release shows its plan status. In analyst mode only releases of registered
datasets are listed (no unregistered or demo runs).
"""

from __future__ import annotations

import logging
from datetime import date

import pandas as pd
import streamlit as st

from core import numbers
from core.errors import InputError
from core.registry import Registry, Release, RunKind
from core.reports import report_html
from ui.budget import budget_bars
from ui.composition import composition_view, releases_bought_view, spend_both_ways
from ui.outcomes import not_shown_frame, stranded_or_not_shown
from ui.plan.budget import budget_plan, statuses
from ui.shell import is_analyst, page_setup

REPORT_KEY = "rel_report"
LOG = logging.getLogger(__name__)


def release_label(r: Release) -> str:
    """A release as listed in the report picker (public fields of the record only)."""
    return f"#{r.id} · {r.title} · {r.dataset or '(unregistered)'} · ε {r.epsilon:g} · {r.time}"


def _result_words(r: Release) -> str:
    """Whether the registry keeps the run's result: a demo run's (and a pruned run's) is not
    kept, its record is (`core.registry.storage`)."""
    if r.artefact_note:
        return r.artefact_note
    return "kept" if r.body_kept else "none attached"


page_setup()
st.title("Releases")
st.caption(
    "What has been released from each registered dataset, and how much of its privacy budget "
    "that spent. Each dataset composes its releases under the accounting its owner chose: "
    "basic (sums of ε and δ) or pld (privacy loss distributions: ε at the dataset's total δ)."
)

try:
    registry = Registry()
except InputError as err:
    st.error(str(err))
    st.stop()

datasets = registry.datasets()
st.subheader("Budgets")
if not datasets:
    st.info(
        f"No registered dataset in `{registry.directory}`. The data owner registers one with "
        "`dpx dataset add NAME --table T=FILE --epsilon E`."
    )
for d in datasets:
    with st.container(border=True):
        st.markdown(f"**{d.name}**" + (" · teaching" if d.teaching else ""))
        budget_bars(registry, d)
        spend_both_ways(registry, d)
        if not is_analyst():
            changes, refusals = registry.budget_history(d.name), registry.refusals(d.name)
            with st.expander(
                f"Budget history and refusals (owner) · {len(changes)} changes, "
                f"{len(refusals)} refusals"
            ):
                st.dataframe(
                    pd.DataFrame(
                        [(c.time, c.epsilon_before, c.epsilon_after) for c in changes],
                        columns=["time (UTC)", "total ε before", "total ε after"],
                    ),
                    hide_index=True,
                    key=f"rel_history_{d.name}",
                )
                st.dataframe(
                    pd.DataFrame(
                        [(r.time, r.tool, r.reason) for r in refusals],
                        columns=["time (UTC)", "tool", "reason (nothing charged)"],
                    ),
                    hide_index=True,
                    key=f"rel_refusals_{d.name}",
                )
        composition_view(registry, d)
        budget_plan(registry, d)
releases_bought_view()

lost = stranded_or_not_shown(registry)
if lost:
    st.subheader("Charged, not shown")
    st.error(
        f"{len(lost)} run(s) ({', '.join(f'#{r.id}' for r in lost)}) were charged but never shown to the person who asked: the app "
        "session was reloaded or the server stopped while they were built, or a process "
        "stopped after the charge. Their charges stand (charge before compute). Finished ones "
        "have a report below; the data owner closes unfinished ones with `dpx dataset "
        "reconcile`."
    )
    with st.container(key="rel_not_shown"):
        st.dataframe(not_shown_frame(lost), hide_index=True, key="rel_not_shown_table")

runs = registry.releases(bodies=False)  # a report reads its body; the list does not
if is_analyst():
    runs = [r for r in runs if r.kind is RunKind.RELEASE]

st.subheader("Releases")
if not runs:
    st.info("Nothing recorded yet.")
    st.stop()

f1, f2, f3 = st.columns(3)
dataset_names = sorted({r.dataset or "(unregistered)" for r in runs})
chosen_datasets = f1.multiselect("Dataset", dataset_names, default=dataset_names, key="rel_ds")
tools = sorted({r.tool for r in runs})
chosen_tools = f2.multiselect("Tool", tools, default=tools, key="rel_tools")
days = sorted(date.fromisoformat(r.time[:10]) for r in runs)
period = f3.date_input("Date range", (days[0], days[-1]), key="rel_dates")
start, end = period if isinstance(period, tuple) and len(period) == 2 else (days[0], days[-1])

shown = [
    r
    for r in runs
    if (r.dataset or "(unregistered)") in chosen_datasets
    and r.tool in chosen_tools
    and start <= date.fromisoformat(r.time[:10]) <= end
]
plan_of = statuses(registry, shown)
st.dataframe(
    pd.DataFrame(
        [
            {
                "id": r.id,
                "time (UTC)": r.time,
                "tool": r.tool,
                "dataset": r.dataset or "(unregistered)",
                "kind": r.kind.value,
                "status": r.status.value,
                "ε": numbers.shown(r.epsilon),
                "δ": numbers.delta_text(r.delta),
                "noise": r.mode,
                "plan": plan_of[r.id],
                "result": _result_words(r),
            }
            for r in shown
        ],
        columns=[
            "id",
            "time (UTC)",
            "tool",
            "dataset",
            "kind",
            "status",
            "ε",
            "δ",
            "noise",
            "plan",
            "result",
        ],  # fmt: skip
    ),
    hide_index=True,
    key="rel_table",
)

st.subheader("Reports")
st.caption(
    "One self-contained HTML file per release (no external requests; figures inline), "
    "the same file as `dpx report ID --out FILE.html`. Only the chosen release's report is "
    "built."
)
by_id = {r.id: r for r in reversed(shown)}  # latest first
if not by_id:
    st.info("No release matches the filters.")
    st.stop()
if st.session_state.get(REPORT_KEY) not in by_id:  # filtered out, or from another registry
    st.session_state.pop(REPORT_KEY, None)
chosen = by_id[
    st.selectbox(
        "Release",
        list(by_id),
        format_func=lambda i: release_label(by_id[i]),
        key=REPORT_KEY,
    )
]
c1, c2 = st.columns([3, 1])
c1.markdown(release_label(chosen))
try:
    html = report_html(registry, chosen.id)
except Exception:  # noqa: BLE001 - one broken release must not take the page down
    # one line, and never the exception's text: it could quote recorded (raw) values
    LOG.exception("report of release #%s failed", chosen.id)
    st.error(
        f"The report of release #{chosen.id} could not be built. The other releases' reports "
        "are unaffected."
    )
else:
    c2.download_button(
        f"Report of release #{chosen.id}",
        data=html,
        file_name=f"dpx-release-{chosen.id}.html",
        mime="text/html",
        key=f"report_{chosen.id}",
        on_click="ignore",  # a download needs no rerun (a rerun could cancel it)
    )
