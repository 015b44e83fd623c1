"""PP balancing: partition a table so each sub-table can be randomized with its own, larger
retention probability, step through Phase 1, then perturb and publish.

Every publication is recorded in the release registry (`core.registry`) through
`charged_release`: for a registered dataset as a release of tool "pp" — a (ρ1, ρ2) publication,
not ε-DP, so no ε is charged — and for a demo table or an upload as an unregistered run (seeded
runs as demo runs), exactly as `dpx balance` does.

Thin page: widgets -> core.balancing -> core.viz.balancing -> st.*.
"""

from __future__ import annotations

import hashlib
import json
import time
from fractions import Fraction
from pathlib import Path

import pandas as pd
import streamlit as st

from core.balancing.columns import parse_columns, published_columns
from core.balancing.demos import DEMO_SETTINGS, DEMOS
from core.balancing.estimate import estimate_distribution, random_count_queries
from core.balancing.explain import balance_text, markers_text, phi_text
from core.balancing.invariants import check_plan
from core.balancing.names import (
    SEEDED_MARKER,
    STATED_LIMITS,
    SUBTABLE_COLUMN,
    frac,
    published_name,
)
from core.balancing.params import parse_rho
from core.balancing.phase1 import order_at
from core.balancing.plan import STATUS_NOTHING, PartitionPlan, plan_partition
from core.balancing.publish import publish
from core.balancing.records import MISSING_LABEL, check_categorical, encode_sa
from core.balancing.release import DEFAULT_PLAN_EPSILON, ReleaseSettings
from core.balancing.report import INTERNAL_LABEL, INTERNAL_REPORT_NAME, MERGE_LABEL, internal_report
from core.data.loading import MAX_UPLOAD_BYTES, load_table
from core.errors import InputError
from core.privacy import Accountant
from core.registry import Registry
from core.viz.balancing import (
    distributions_figure,
    groups_figure,
    sa_distribution_figure,
    step_figure,
)
from pages.common import current_noise, forget, kept_upload, persist, user_errors
from pages.mode import is_analyst, registered_dataset_picker
from pages.pp_analyst import analyst_view, published_plan_frame
from pages.pp_publish import publish_recorded, recorded_text

STEP = "pp_step"
PUBLICATION = "pp_publication"  # {"pub": Publication, "noise": Noise, "settings": tuple}
RHO_HELP = (
    "An attacker's belief about any protected value may rise from at most ρ1 to at most ρ2. "
    "Type a decimal (0.3) or a fraction (1/3); values are used exactly."
)
GROUPS_SHOWN = 60
REGISTERED = "Registered dataset"


@st.cache_data(show_spinner=False)
def _demo_table(name: str) -> pd.DataFrame:
    return next(d for d in DEMOS if d.name == name).load()


@st.cache_data(show_spinner=False, max_entries=max(2, (1 << 30) // MAX_UPLOAD_BYTES), ttl=3600)
def _upload_table(data: bytes, name: str, digest: str) -> pd.DataFrame:
    return load_table(data, name=name)


@st.cache_data(show_spinner="Balancing…")
def _plan(counts: tuple, rho1: str, rho2: str, tie: str, merge: str) -> PartitionPlan:
    return plan_partition(
        dict(counts),
        parse_rho(rho1, "ρ1"),
        parse_rho(rho2, "ρ2"),
        tie_policy=tie,
        merge_policy=merge,
    )


def _kept(key: str, options: list, default=None) -> str:
    """`persist(key, default)`, first dropping a kept value that is no longer an option."""
    value = st.session_state.get(key)
    if value is not None and (
        value not in options if not isinstance(value, list) else not set(value) <= set(options)
    ):
        forget(key)
    return persist(key, default)


def _fmt(x) -> str:
    return "n/a" if x is None else frac(x)


def _set_step(value: int) -> None:
    st.session_state[STEP] = value


st.title("⚖️ PP balancing")
st.write(
    "Randomizing a sensitive attribute (SA) over a small domain keeps far more of each value than "
    "randomizing over the whole domain. **PP** (Perturbation Partitioning) splits the table into "
    "*balanced* sub-tables, each with few SA values, and perturbs each one with its own retention "
    "probability p_i while keeping every posterior ≤ ρ2."
)

# ------------------------------------------------------------------------------------ data
analyst = is_analyst()  # DPX_MODE=analyst: registered datasets, releases only
with user_errors():
    sources = [REGISTERED] if analyst else ["Demo table", "Upload a table", REGISTERED]
    source = st.radio("Data", sources, horizontal=True, key=_kept("pp_source", sources, sources[0]))
    demo_name = None
    registry, dataset = None, None
    if source == REGISTERED:
        picked = registered_dataset_picker(key="pp_dataset")
        if picked is None:
            st.stop()
        registry, dataset = picked
        private = dataset.private_tables
        if len(private) != 1:
            raise InputError(
                f"PP balancing reads one table, but dataset '{dataset.name}' has "
                f"{len(private)} private tables. The owner registers the table as its own dataset."
            )
        table = private[0]
        df = _upload_table(Path(table.path).read_bytes(), table.path, table.sha256)
        data_key = f"registered:{dataset.name}"  # not the file's SHA-256 (reports show params)
    elif source == "Demo table":
        names = [d.name for d in DEMOS]
        demo_name = st.selectbox(
            "Demo dataset",
            names,
            persist_state="session",
            key=_kept("pp_demo", names, names[0]),
            format_func=lambda n: f"{n} — {next(d for d in DEMOS if d.name == n).description}",
        )
        df = _demo_table(demo_name)
        demo = next(d for d in DEMOS if d.name == demo_name)
        st.caption(f"Source: {demo.source}. Licence: {demo.licence}.")
        data_key = f"demo:{demo_name}"
    else:
        upload = kept_upload("CSV or Parquet table", "pp_upload", type=["csv", "parquet", "pq"])
        if upload is None:
            st.info("Upload a table with one row per person, or pick a demo table.")
            st.stop()
        upload_name, data = upload
        digest = hashlib.sha256(data).hexdigest()
        df = _upload_table(data, upload_name, digest)
        data_key = f"upload:{digest}"

    sa_default, rho1_default, rho2_default = DEMO_SETTINGS.get(demo_name, (None, "1/3", "2/3"))
    columns = [str(c) for c in df.columns]
    c1, c2, c3 = st.columns([2, 1, 1])
    sa = c1.selectbox(
        "Sensitive attribute (SA) column",
        columns,
        persist_state="session",
        key=_kept(
            f"pp_sa_{demo_name}", columns, sa_default if sa_default in columns else columns[-1]
        ),
    )
    rho1_text = c2.text_input(
        "ρ1 (prior bound)",
        persist_state="session",
        key=persist(f"pp_rho1_{demo_name}", rho1_default),
        help=RHO_HELP,
    )
    rho2_text = c3.text_input(
        "ρ2 (posterior bound)",
        persist_state="session",
        key=persist(f"pp_rho2_{demo_name}", rho2_default),
        help=RHO_HELP,
    )
    st.caption(
        f"ρ1 = {rho1_text}, ρ2 = {rho2_text}: an attacker's belief about any protected value may rise "
        "from at most ρ1 to at most ρ2."
    )
    check_categorical(df[sa])  # before anything is computed: a continuous column is refused

    missing = "error"
    n_missing = int(df[sa].isna().sum())
    if n_missing or analyst:  # an analyst is always asked: whether values are missing is private
        question = (
            f"If '{sa}' has missing values, what should happen to them?"
            if analyst
            else f"'{sa}' has {n_missing} missing value(s). What should happen to them?"
        )
        choice = st.radio(
            question,
            ["drop those records", f"count them as the category {MISSING_LABEL}"],
            index=None,
            persist_state="session",
            key=persist("pp_missing"),
        )
        if choice is None:
            st.warning(
                "Choose how to handle the missing values to continue (the choice is recorded)."
            )
            st.stop()
        missing = "drop" if choice.startswith("drop") else "category"
    rho1_value, rho2_value = parse_rho(rho1_text, "ρ1"), parse_rho(rho2_text, "ρ2")

    with st.expander("Options"):
        tie = st.radio(
            "Tie policy",
            ["stable", "value_order"],
            horizontal=True,
            persist_state="session",
            key=persist("pp_tie"),
            help="stable: re-sort the previous order (reproduces the thesis); value_order: re-sort "
            "from the canonical order each iteration. Only group contents can differ.",
        )
        merge = st.radio(
            "Phase 2 merging",
            ["none", "utility"],
            horizontal=True,
            persist_state="session",
            key=persist("pp_merge"),
            help=f"utility is {MERGE_LABEL}. Off by default.",
        )
        if merge == "utility":
            st.info(f"Merging is **this project's design**, not the thesis's: {MERGE_LABEL}.")

if analyst:  # releases and public parameters only (pages/pp_analyst.py); no exact plan
    settings = {
        "data": data_key, "sa": sa, "rho1": rho1_text, "rho2": rho2_text, "tie": tie,
        "merge": merge, "missing": missing, "rho1_value": rho1_value, "rho2_value": rho2_value,
    }  # fmt: skip
    # the columns the owner declared publishable on the dataset (dpx dataset policy)
    analyst_view(df, sa, registry, dataset, settings, declared=dataset.publishable)
    st.stop()

with user_errors():
    encoded = encode_sa(df[sa], missing=missing)
    counts = encoded.counts()
    plan = _plan(tuple(counts.items()), rho1_text, rho2_text, tie, merge)

# --------------------------------------------------------------------------- overview
EXACT_PLAN_NOTE = (
    "**Exact plan** — thesis Phase 1 on the exact counts: the owner's teaching and evaluation "
    "view, not a release. A publication plans its sub-tables from noisy counts instead (see "
    "Publish), so its sub-tables differ from these."
)
st.info(EXACT_PLAN_NOTE)
beta_name = "β'" if plan.t2 else "β"
m = st.columns(5)
m[0].metric("|T|", plan.n)
m[1].metric("SA values", len(plan.counts))
m[2].metric("f_max (SA')", plan.f_max)
m[3].metric("β = ⌊|T|/f_max⌋", plan.beta)
m[4].metric("β' (for T')", plan.beta_prime)
st.plotly_chart(sa_distribution_figure(plan), key="pp_sa_chart")
if plan.status == STATUS_NOTHING:  # one message: PP has nothing to do
    st.warning(
        f"PP does not run: every SA value is more frequent than ρ1 = {rho1_text} "
        f"(the rarest holds {min(plan.counts.values())} of {plan.n} records), so no value needs "
        "protection and there is nothing to randomize. Lower ρ1 to protect the rarer values."
    )
    if st.checkbox("I understand: offer the table unperturbed", key="pp_confirm_unperturbed"):
        st.download_button(
            "Download the unperturbed table",
            df.to_csv(index=False),
            "unperturbed.csv",
            "text/csv",
            on_click="ignore",
        )
    st.stop()
if plan.t2:
    st.info(
        f"SA' ≠ SA: {', '.join(plan.t2)} occur more often than ρ1·|T| and are not protected "
        f"(their prior already exceeds ρ1). Phase 1 balances T' ({plan.t_prime_size} records) with "
        f"β' = {plan.beta_prime}; the T'' records are distributed afterwards."
    )


# ------------------------------------------------------------------------- step-through
trace = plan.phase1.trace
t = len(trace)
signature = (tuple(counts.items()), rho1_text, rho2_text, tie, merge)
if st.session_state.get("pp_signature") != signature:
    st.session_state["pp_signature"] = signature
    st.session_state[STEP] = 1
    st.session_state.pop(PUBLICATION, None)
persist(STEP)  # the slider's step survives navigating away and back
if "pp_pending_step" in st.session_state:
    st.session_state[STEP] = st.session_state.pop("pp_pending_step")
st.session_state[STEP] = min(max(int(st.session_state.get(STEP, 1)), 1), t)

st.subheader(f"Phase 1: balancing {'T′' if plan.t2 else 'T'} — {t} iteration(s)")
b = st.columns(4)
current = st.session_state[STEP]
b[0].button("« First", key="pp_first", on_click=_set_step, args=(1,), disabled=current == 1)
b[1].button("◀ Prev", key="pp_prev", on_click=_set_step, args=(current - 1,), disabled=current == 1)
b[2].button("Next ▶", key="pp_next", on_click=_set_step, args=(current + 1,), disabled=current == t)
b[3].button("Last »", key="pp_last", on_click=_set_step, args=(t,), disabled=current == t)
if t > 1:
    st.slider("Iteration", 1, t, key=STEP)
    playing = st.toggle(
        "▶ Play (one step every 0.8 s)", persist_state="session", key=persist("pp_play", False)
    )
else:
    playing = False
j = st.session_state[STEP]
row = trace[j - 1]
order = order_at(plan.phase1, j)

left, right = st.columns([3, 2])
left.plotly_chart(
    step_figure(row, order, plan.phase1.beta, beta_name=beta_name, t2_counts=plan.t2 or None),
    key="pp_step_chart",
)
with right:
    st.markdown(f"**Iteration {j} of {t}** — |T0| = {row.n0}, {beta_name} = {plan.phase1.beta}")
    st.markdown(markers_text(row, beta_name))
    st.code(phi_text(row, plan.phase1.beta, beta_name), language=None, wrap_lines=True)
    st.markdown(f"Branch of Equation (22): `{row.branch}`, h = **{row.h}**")
    group_txt = ", ".join(f"{v}: {c}" for v, c in row.group.items())
    st.markdown(f"**Group g{j}** = {{{group_txt}}} — size {sum(row.group.values())}")
    vector = ",".join(str(row.group.get(v, 0)) for v in plan.canonical[:30])
    st.caption(f"as a vector over {', '.join(plan.canonical[:30])}: ({vector})")
    st.markdown(f"Balance after removal: {balance_text(row, plan.phase1.beta, beta_name)}")

so_far = plan.phase1.groups[:j]
first = max(0, len(so_far) - GROUPS_SHOWN)
st.plotly_chart(
    groups_figure(
        so_far[first:],
        plan.canonical,
        plan.sa_prime,
        title=f"Groups so far ({len(so_far)})" + (f", last {GROUPS_SHOWN} shown" if first else ""),
        names=[f"g{i}" for i in range(first + 1, len(so_far) + 1)],
    ),
    key="pp_groups_chart",
)

if playing and j < t:  # advance after this step is drawn; only the current step is rendered
    time.sleep(0.8)
    st.session_state["pp_pending_step"] = j + 1  # applied before the slider on the next run
    st.rerun()

# ----------------------------------------------------------------- T'' distribution step
if plan.distribution is not None:
    d = plan.distribution
    st.subheader("Distributing T'' over the groups")
    n2 = sum(plan.t2.values())
    sizes = [sum(g.values()) for g in plan.phase1.groups]
    st.markdown(
        f"Fixed T'' order (descending original frequency): **{', '.join(d.t2_order)}**; "
        f"|T''| = {n2}, |T'| = {plan.t_prime_size}. Quota_j = ⌊|g_j|·|T''| / |T'|⌋; the residue "
        f"r = {d.residue} goes to the last group; the T'' sequence is cut in group order."
    )
    shares = pd.DataFrame(
        {
            "group": [f"g{i}" for i in range(1, len(sizes) + 1)],
            "|g_j| before": sizes,
            "exact share": [frac(Fraction(s * n2, plan.t_prime_size)) for s in sizes],
            "quota": d.quotas,
            "takes": d.takes,
            "receives": [
                ", ".join(f"{v}: {c}" for v, c in got.items()) or "—" for got in d.received
            ],
        }
    )
    st.dataframe(shares.head(500), hide_index=True)
    st.plotly_chart(
        groups_figure(
            plan.groups[:GROUPS_SHOWN], plan.canonical, plan.sa_prime, title="Final groups"
        ),
        key="pp_final_chart",
    )

# ----------------------------------------------------------------------- sub-table table
st.subheader("Sub-tables and retention probabilities")
if plan.merge_steps:
    merged = ", ".join(f"g{m.i + 1} + g{m.j + 1} (gain {frac(m.gain)})" for m in plan.merge_steps)
    st.caption(f"After Phase 2 merging (project design): {merged}; numbered after the merges.")
rows = [
    {
        "sub-table": f"g{i}",
        "n_i": s.size,
        "m_i": s.m,
        "ρ1_i (SA' only)": frac(s.rho1),
        "bound (Lemma 4/5)": _fmt(s.bound),
        "γ_i": frac(s.gamma),
        "p_i": _fmt(s.p),
        "q_i": _fmt(s.q),
        "worst posterior": _fmt(s.worst_posterior),
        "admissible": "yes" if s.admissible else "NO",
    }
    for i, s in enumerate(plan.subtables, 1)
]
w = plan.whole_table
rows.append(
    {
        "sub-table": "whole table (baseline)",
        "n_i": w.size,
        "m_i": w.m,
        "ρ1_i (SA' only)": frac(w.rho1),
        "bound (Lemma 4/5)": "—",
        "γ_i": frac(w.gamma),
        "p_i": _fmt(w.p),
        "q_i": _fmt(w.q),
        "worst posterior": _fmt(w.worst_posterior),
        "admissible": "yes",
    }
)
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

accept_fallback = False
if plan.refused:
    st.error(
        f"{plan.reason} What you can do: raise ρ2, or accept the single-table fallback "
        f"(the whole table as one sub-table, p = {frac(w.p)})."
    )
    accept_fallback = st.checkbox("Accept the single-table fallback", key="pp_accept_fallback")
    if not accept_fallback:
        st.stop()

# ---------------------------------------------------------------------------- publish
st.subheader("Publish (Phase 3 — project design)")
st.caption(
    "A publication plans its sub-tables from value counts with discrete Laplace noise (ε charged), "
    "then each row keeps its value with probability p_i, otherwise it gets a uniform value from "
    "its sub-table's domain. Rows are shuffled and a sub-table id is added. "
    + " ".join(STATED_LIMITS)
)
noise = current_noise()
st.caption(f"Noise: {noise.label}")
unit = None if dataset is None else dataset.uid
choices = [c for c in columns if c not in (sa, unit)]
if dataset is not None:  # a registered dataset: the columns its owner declared publishable
    choices = [c for c in choices if c in dataset.publishable]
declared = st.multiselect(
    "Columns published unchanged next to the SA (none by default: each one makes a record's row "
    "linkable to the person)",
    choices,
    persist_state="session",
    key=_kept(f"pp_columns_{demo_name}", choices, []),
)
plan_epsilon = st.number_input(
    "ε for the partition plan (more privacy ← smaller)",
    min_value=0.01,
    max_value=10.0,
    step=0.1,
    persist_state="session",
    key=persist("pp_plan_epsilon", DEFAULT_PLAN_EPSILON),
    help="The published sub-tables are planned from value counts with discrete Laplace noise of "
    "scale 2/ε (sensitivity 2: one record's value changes two counts by one).",
)
categories_text = st.text_input(
    "Categories of the SA, declared public (comma-separated; empty: read from the data, each "
    "listed only above a noisy threshold)",
    persist_state="session",
    key=persist(f"pp_categories_{demo_name}_{sa}", ", ".join(plan.canonical) if demo_name else ""),
    help="Declared categories are public, so listing them costs nothing (δ = 0). Read from the "
    "data, a value is listed only when its noisy count reaches a threshold, so a value held by "
    "a few records is not revealed (δ ≤ 1e-6).",
)
if demo_name:
    st.caption("Demo table: its categories are public and prefilled from the table.")
if not plan.refused:
    accept_fallback = st.checkbox(
        "If the noisy plan is refused, publish the whole table as one sub-table",
        key="pp_accept_fallback_release",
    )
with user_errors():
    categories = parse_columns(categories_text)
    release_settings = ReleaseSettings(
        rho1_value, rho2_value, plan_epsilon=float(plan_epsilon), tie_policy=tie,
        merge_policy=merge, missing=missing, accept_fallback=accept_fallback,
        categories=tuple(categories) if categories else None,
    )  # fmt: skip
cost = release_settings.cost
st.caption(
    f"Publishing charges ε = {cost.epsilon:g}, δ = {cost.delta:.2g}"
    + (f" to dataset '{dataset.name}'." if dataset is not None else " (recorded, not limited).")
)
settings = (
    signature, sa, missing, tuple(declared), plan_epsilon, tuple(categories), accept_fallback,
    noise.label,
)  # fmt: skip
if st.button("Publish (perturb)", key="pp_publish", type="primary"):
    st.session_state.pop(PUBLICATION, None)  # a refused publish leaves no earlier table on screen
    with user_errors():
        if registry is None:  # demo table or upload: recorded as an unregistered run
            try:
                registry = Registry()
            except InputError as err:
                st.warning(f"This publication is not recorded: {err}")
        published_cols = published_columns(
            columns, sa, unit, declared if dataset is None else dataset.publishable,
            None if dataset is None else [sa, *declared],
        )  # fmt: skip
        accountant = Accountant(noise, release_settings.cost, release_settings.claim)
        release, pub = publish_recorded(
            registry,
            None if dataset is None else dataset.name,
            release_settings,
            {
                "data": data_key, "sa": sa, "rho1": rho1_text, "rho2": rho2_text, "tie": tie,
                "merge": merge, "missing": missing, "columns": published_cols,
                "plan_epsilon": float(plan_epsilon), "categories": categories,
                "accept_fallback": accept_fallback,
                "noise": noise.mode, "via": "app",
            },
            lambda: publish(df, sa, published_cols, release_settings, accountant),
        )  # fmt: skip
        st.session_state[PUBLICATION] = {
            "pub": pub, "noise": noise, "settings": settings, "recorded": recorded_text(release)
        }  # fmt: skip

stored = st.session_state.get(PUBLICATION)
if stored is not None and stored["settings"][:3] != settings[:3]:  # another plan or SA column
    st.session_state.pop(PUBLICATION, None)
    stored = None
if stored is not None:
    pub, pub_noise = stored["pub"], stored["noise"]
    if stored["settings"] != settings:
        st.warning(
            "Earlier publication — made with other settings (columns, plan ε, fallback or noise "
            "mode) than the ones above. Press **Publish** to publish with the current settings."
        )
    if not pub_noise.is_secure:
        st.warning(f"This publication used seeded noise: {pub_noise.label}.")
    st.info(stored.get("recorded", ""))
    for line in pub.metadata["privacy"]["statement"]:
        st.caption(line)
    published = pub.table
    st.markdown(
        f"**Published plan** (from noisy counts): {len(pub.release.subtables)} sub-table(s)"
        + (" — the single-table fallback." if pub.release.fallback else ".")
    )
    st.dataframe(published_plan_frame(pub).head(1000), hide_index=True, key="pp_release_plan")
    est = {
        e.value: e
        for e in estimate_distribution(published, sa, SUBTABLE_COLUMN, pub.metadata["subtables"])
    }
    values = plan.canonical[:60]  # a value without a planned slot is estimated 0
    pub_counts = pd.Series(published[sa]).value_counts()
    st.plotly_chart(
        distributions_figure(
            values,
            [plan.counts[v] for v in values],
            [int(pub_counts.get(v, 0)) for v in values],
            [float(est[v].estimate) if v in est else 0.0 for v in values],
            [est[v].half_width if v in est else 0.0 for v in values],
        ),
        key="pp_publish_chart",
    )
    tv = sum(abs(float(e.estimate) - plan.counts.get(v, 0)) for v, e in est.items()) / (2 * plan.n)
    st.caption(
        "evaluation only — uses the raw data: the 'original' bars and the distance below are "
        f"computed from the unperturbed table. Total-variation distance original vs "
        f"reconstructed: {tv:.4f}."
    )
    qi = [c for c in published.columns if c not in (sa, SUBTABLE_COLUMN)]
    if qi:
        queries = random_count_queries(
            df,
            published,
            sa,
            SUBTABLE_COLUMN,
            pub.metadata["subtables"],
            qi,
            current_noise("evaluation"),
        )
        if len(queries):
            q1, q2 = st.columns(2)
            q1.metric(
                "Median relative error, 50 random count queries",
                f"{queries['relative_error'].median():.3f}",
            )
            q2.metric("95% intervals covering the true count", f"{queries['covered'].mean():.0%}")
            with st.expander("The random count queries (evaluation only — uses the raw data)"):
                st.dataframe(queries, hide_index=True)
    st.dataframe(published.head(200), hide_index=True)
    report = internal_report(plan, noise=pub_noise.describe(), publication=pub.metadata)
    csv_name = published_name("pp_published.csv", pub_noise)
    d1, d2, d3 = st.columns(3)
    d1.download_button(
        "Published CSV",
        pub.csv(),
        csv_name.name,
        "text/csv",
        key="pp_dl_csv",
        on_click="ignore",
    )
    seeded_note = (
        "" if pub_noise.is_secure else f" Seeded: its name and header say {SEEDED_MARKER}."
    )
    d1.caption("The release." + seeded_note)
    d2.download_button(
        "Sub-table metadata",
        json.dumps(pub.metadata, indent=2),
        csv_name.with_suffix(".metadata.json").name,
        "application/json",
        key="pp_dl_meta",
        on_click="ignore",
    )
    d2.caption("Released with the CSV (the claim, the mechanisms, the noisy plan).")
    d3.download_button(
        "Run report (INTERNAL)",
        json.dumps(report, indent=2),
        INTERNAL_REPORT_NAME,
        "application/json",
        key="pp_dl_report",
        on_click="ignore",
    )
    d3.caption(INTERNAL_LABEL)
