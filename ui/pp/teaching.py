"""The PP page's teaching views (owner only: they show the plan computed from the raw table):
the SA distribution, Phase 1 step by step — each step in two plain sentences right above its
full-width chart (both on one 1280 x 720 screen), the formula in an expander under it — the T''
distribution and the sub-table table. Phase 1 runs on the exact counts: no noise, nothing
charged, the same steps for every student (labelled as a teaching view)."""

from __future__ import annotations

from fractions import Fraction

import pandas as pd
import streamlit as st

from core.balancing.explain import balance_text, markers_text, phi_text
from core.balancing.invariants import check_plan
from core.balancing.names import frac
from core.balancing.phase1 import TraceRow, order_at
from core.balancing.plan import STATUS_NOTHING, PartitionPlan
from core.viz.balancing import groups_figure, sa_distribution_figure, step_figure
from ui import pace
from ui.charts import show_chart
from ui.pp.request import ExactPlanRequest
from ui.state import persist

STEP, PLAYING, PENDING, PACE = "pp_step", "pp_play", "pp_pending", "pp_pace"
PLAN_SHOWN = "pp_plan_shown"  # the fingerprint of the ExactPlanRequest the stepper is on
GROUPS_SHOWN = 60
PLAY_SECONDS = 0.8  # Play's pace: its label and its clock (`ui.pace`) both read this
TEACHING_NOTE = (
    "**Teaching view**: Phase 1 on the table's exact counts — no noise, so every student sees "
    "the same steps. It charges no budget and releases nothing."
)


def _names(values, limit: int = 4) -> str:
    shown = ", ".join(values[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")


def _records(n: int) -> str:
    return f"{n} record" + ("" if n == 1 else "s")


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def step_sentences(row: TraceRow, order, beta: int) -> str:
    """One Phase 1 iteration in two plain sentences: what the group takes from which values,
    and why that many (no formula: the formula is `phi_text`, shown beside)."""
    if row.h == 0:
        return (
            f"No equal slice can be taken from the {beta} most frequent values without leaving "
            "one value over-represented in the rest, so the whole remainder "
            f"({_records(row.n0)}) becomes the last group, g{row.j}."
        )
    top = [f"{value} ({count})" for value, count in list(order)[:beta]]
    take = (
        f"Group g{row.j} takes {_records(row.h)} from each of the {beta} most frequent values "
        f"still left — {_names(top)} — so each of them is exactly 1/{beta} of the group's "
        f"{beta * row.h} records."
    )
    if row.branch == "h=fb":
        rest = (
            "nothing is left after this group"
            if row.n_after == 0
            else f"the {_records(row.n_after)} left stay balanced (no value above 1/{beta} of them)"
        )
        why = (
            f"{row.h} is all of {row.fb[0]}, the {_ordinal(beta)} most frequent value, and {rest}."
        )
    else:
        why = (
            f"It stops below the {row.fb[1]} records of {row.fb[0]}: {row.fb1[0]} "
            f"({_records(row.fb1[1])}), the most frequent value not taken, must stay at most "
            f"1/{beta} of what remains, and one more record from each value would break that."
        )
    return f"{take} {why}"


def overview(plan: PartitionPlan, rho1: str) -> None:
    """Key numbers and the SA distribution."""
    m = st.columns(5)
    m[0].metric("|T|", plan.n)
    m[1].metric("SA values", len(plan.counts))
    m[2].metric("f_max (SA')", plan.f_max)
    m[3].metric("β = ⌊|T|/f_max⌋", plan.beta)
    m[4].metric("β' (for T')", plan.beta_prime)
    show_chart(st, sa_distribution_figure(plan), "pp_sa_chart")
    if plan.t2 and plan.status != STATUS_NOTHING:
        st.info(
            f"SA' ≠ SA: {', '.join(plan.t2)} occur more often than ρ1·|T| and are not protected "
            f"(their prior already exceeds ρ1). Phase 1 balances T' ({plan.t_prime_size} "
            f"records) with β' = {plan.beta_prime}; the T'' records are distributed afterwards."
        )


def _set_step(value: int) -> None:
    st.session_state[STEP] = value


def _current_step(t: int, request: ExactPlanRequest) -> int:
    """The step shown: reset to 1 for a new plan (another `request` fingerprint), a pending Play
    step applied, kept in 1..t."""
    if st.session_state.get(PLAN_SHOWN) != request.fingerprint():
        st.session_state[PLAN_SHOWN] = request.fingerprint()
        st.session_state[STEP] = 1
    persist(STEP)  # the step survives navigating away and back, and a reload
    pending = st.session_state.pop(PENDING, None)
    if pending is not None:
        step, keep_playing = pending
        st.session_state[STEP] = step
        st.session_state[PLAYING] = keep_playing
    st.session_state[STEP] = min(max(int(st.session_state.get(STEP, 1)), 1), t)
    return st.session_state[STEP]


def phase1_stepper(plan: PartitionPlan, request: ExactPlanRequest) -> None:
    """First / Prev / Next / Last, a slider and Play over Phase 1; one step drawn at a time.
    `request`: what `plan` was drawn from (a new one starts again from step 1)."""
    started = pace.clock()
    trace, beta = plan.phase1.trace, plan.phase1.beta
    beta_name = "β'" if plan.t2 else "β"
    t = len(trace)
    current = _current_step(t, request)
    st.subheader(f"Phase 1: balancing {'T′' if plan.t2 else 'T'} — {t} iteration(s)")
    st.caption(TEACHING_NOTE)
    b = st.columns([1, 1, 1, 1, 3], vertical_alignment="bottom")
    b[0].button("« First", key="pp_first", on_click=_set_step, args=(1,), disabled=current == 1)
    b[1].button("◀ Prev", key="pp_prev", on_click=_set_step, args=(current - 1,),
                disabled=current == 1)  # fmt: skip
    b[2].button("Next ▶", key="pp_next", on_click=_set_step, args=(current + 1,),
                disabled=current == t)  # fmt: skip
    b[3].button("Last »", key="pp_last", on_click=_set_step, args=(t,), disabled=current == t)
    playing = False
    if t > 1:
        playing = b[4].toggle(
            pace.play_label(PLAY_SECONDS, "step"), key=persist(PLAYING, False)
        )  # fmt: skip
        st.slider("Iteration", 1, t, key=STEP)
        if playing:
            pace.pace_note(PACE, PLAY_SECONDS, "step")
    j = st.session_state[STEP]
    row = trace[j - 1]
    order = order_at(plan.phase1, j)
    with st.container(key="pp_step_text"):
        st.markdown(f"**Iteration {j} of {t}.** " + step_sentences(row, order, beta))
    show_chart(
        st, step_figure(row, order, beta, beta_name=beta_name, t2_counts=plan.t2 or None),
        "pp_step_chart", width="stretch",
    )  # fmt: skip
    with st.expander("The formula (spec section 2.3, Equation 22)"):
        st.markdown(f"|T0| = {row.n0}, {beta_name} = {beta}; " + markers_text(row, beta_name))
        st.code(phi_text(row, beta, beta_name), language=None, wrap_lines=True)
        st.markdown(f"Branch of Equation (22): `{row.branch}`, h = **{row.h}**")
        group_txt = ", ".join(f"{v}: {c}" for v, c in row.group.items())
        st.markdown(f"**g{j}** = {{{group_txt}}} — size {sum(row.group.values())}")
        st.markdown(f"Balance after removal: {balance_text(row, beta, beta_name)}")
    _groups_so_far(plan, j)
    if playing and j < t:  # advance after this step is drawn; Play turns off at the last step
        pace.wait_for_next(PACE, PLAY_SECONDS, started)
        st.session_state[PENDING] = (j + 1, j + 1 < t)
        st.rerun()
    elif playing and j == t and t > 1:  # pressed at the end: start again from the first step
        st.session_state[PENDING] = (1, True)
        st.rerun()
    if not playing:
        pace.stop_playing(PACE)


def _groups_so_far(plan: PartitionPlan, j: int) -> None:
    so_far = plan.phase1.groups[:j]
    first = max(0, len(so_far) - GROUPS_SHOWN)
    title = f"Groups so far ({len(so_far)})" + (f", last {GROUPS_SHOWN} shown" if first else "")
    show_chart(
        st,
        groups_figure(
            so_far[first:], plan.canonical, plan.sa_prime, title=title,
            names=[f"g{i}" for i in range(first + 1, len(so_far) + 1)],
        ),
        "pp_groups_chart",
    )  # fmt: skip


def t2_distribution(plan: PartitionPlan) -> None:
    """When SA' ≠ SA: how the frequent (T'') records are shared over the groups."""
    if plan.distribution is None:
        return
    d = plan.distribution
    st.subheader("Distributing T'' over the groups")
    n2 = sum(plan.t2.values())
    sizes = [sum(g.values()) for g in plan.phase1.groups]
    st.markdown(
        f"The frequent values **{', '.join(d.t2_order)}** ({n2} records) are shared over the "
        f"groups in proportion to each group's size, so each group keeps its share of them; "
        f"the {d.residue} record(s) left by rounding down go to the last group."
    )
    with st.expander("The formula"):
        st.markdown(
            f"Quota_j = ⌊|g_j|·|T''| / |T'|⌋ with |T''| = {n2}, |T'| = {plan.t_prime_size}; "
            f"residue r = {d.residue}; the T'' sequence (descending original frequency) is cut "
            "in group order."
        )
    shares = pd.DataFrame(
        {
            "group": [f"g{i}" for i in range(1, len(sizes) + 1)],
            "|g_j| before": sizes,
            "exact share": [frac(Fraction(s * n2, plan.t_prime_size)) for s in sizes],
            "quota": d.quotas,
            "takes": d.takes,
            "receives": [", ".join(f"{v}: {c}" for v, c in got.items()) for got in d.received],
        }
    )
    st.dataframe(shares.head(500), hide_index=True)
    show_chart(
        st,
        groups_figure(
            plan.groups[:GROUPS_SHOWN], plan.canonical, plan.sa_prime, title="Final groups"
        ),
        "pp_final_chart",
    )


def _fmt(x) -> str:
    return "not applicable" if x is None else frac(x)


def subtable_table(plan: PartitionPlan) -> None:
    st.subheader("Sub-tables and retention probabilities")
    if plan.merge_steps:
        merged = ", ".join(
            f"g{m.i + 1} + g{m.j + 1} (gain {frac(m.gain)})" for m in plan.merge_steps
        )
        st.caption(f"After Phase 2 merging (project design): {merged}; numbered after merges.")
    rows = [_subtable_row(f"g{i}", s, s.admissible) for i, s in enumerate(plan.subtables, 1)]
    w = plan.whole_table
    rows.append(_subtable_row("whole table (baseline)", w, True, bound=False))
    st.dataframe(pd.DataFrame(rows).head(1000), hide_index=True, key="pp_subtables")
    if all(s.admissible for s in plan.subtables):
        kept = sum(s.size * s.kept_share for s in plan.subtables) / plan.n
        st.markdown(
            f"Expected share of values kept: **{float(kept):.3f}** with sub-tables vs "
            f"**{float(w.kept_share):.3f}** perturbing the whole table as one (p = {frac(w.p)})."
        )
    violations = check_plan(plan)
    if violations:
        st.error("Internal error — invariant checks failed: " + "; ".join(violations))
    else:
        st.success(
            "Invariant checks passed: groups partition T, Lemmas 1–5, h maximal, T0 balanced "
            "throughout, every admissible posterior ≤ ρ2."
        )
    for note in plan.notes:
        st.info(note)


def _subtable_row(name: str, s, admissible: bool, bound: bool = True) -> dict:
    return {
        "sub-table": name,
        "n_i": s.size,
        "m_i": s.m,
        "ρ1_i (SA' only)": frac(s.rho1),
        "bound (Lemma 4/5)": _fmt(s.bound) if bound else "not applicable",
        "γ_i": frac(s.gamma),
        "p_i": _fmt(s.p),
        "q_i": _fmt(s.q),
        "worst posterior": _fmt(s.worst_posterior),
        "admissible": "yes" if admissible else "NO",
    }
