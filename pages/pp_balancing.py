"""PP balancing: partition a table so each sub-table can be randomized with its own, larger
retention probability, step through Phase 1, then perturb and publish.

Steps: choose data → SA, (ρ1, ρ2), missing values, options → (owner) the SA distribution,
Phase 1 step by step, the T'' distribution and the sub-table table → the columns to publish →
**Publish** (`ui.pp.publish.publish_step`, the one place this page releases) → the publication,
its evaluation (owner only, uses the raw data) and downloads. Analyst mode: `ui.pp.analyst`.
"""

from __future__ import annotations

import streamlit as st

from core.balancing.names import STATED_LIMITS, frac
from core.balancing.plan import STATUS_NOTHING, PartitionPlan
from ui.data import DemoKind, choose_data
from ui.downloads import download
from ui.noise import current_noise, show_mode
from ui.outcomes import (
    ChargePlan,
    release_button,
    show_kept_outcome,
    show_not_shown,
    user_errors,
)
from ui.plan.pp import plan_step
from ui.pp.analyst import analyst_view
from ui.pp.inputs import PPSettings, choose_settings, plan_for
from ui.pp.publication import downloads, owner_evaluation, show_kept
from ui.pp.publish import (
    PP_TOOL,
    drop_publication,
    kept_publication,
    prepared_of,
    publish_step,
    release_options,
)
from ui.pp.request import ExactPlanRequest, PPPageRequest
from ui.pp.teaching import overview, phase1_stepper, subtable_table, t2_distribution
from ui.shell import is_analyst, page_setup

EXACT_PLAN_NOTE = (
    "**Exact plan** — thesis Phase 1 on the exact counts: the owner's teaching and evaluation "
    "view, not a release. A publication plans its sub-tables from noisy counts instead (see "
    "Publish), so its sub-tables differ from these."
)


def nothing_to_do(df, plan: PartitionPlan, s: PPSettings) -> None:
    """PP does not run: every SA value is already more frequent than ρ1."""
    st.warning(
        f"PP does not run: every SA value is more frequent than ρ1 = {s.rho1} (the rarest "
        f"holds {min(plan.counts.values())} of {plan.n} records), so no value needs protection "
        "and there is nothing to randomize. Lower ρ1 to protect the rarer values."
    )
    if st.checkbox("I understand: offer the table unperturbed", key="pp_confirm_unperturbed"):
        download(st, "Download the unperturbed table", df.to_csv(index=False), "unperturbed.csv",
                 "text/csv", key="pp_dl_unperturbed")  # fmt: skip
    st.stop()


def fallback_choice(plan: PartitionPlan) -> bool:
    """The exact plan is refused: stop, unless the single-table fallback is accepted."""
    if not plan.refused:
        return False
    st.error(
        f"{plan.reason} What you can do: raise ρ2, or accept the single-table fallback "
        f"(the whole table as one sub-table, p = {frac(plan.whole_table.p)})."
    )
    if not st.checkbox("Accept the single-table fallback", key="pp_accept_fallback"):
        st.stop()
    return True


def publish_section(choice, df, plan: PartitionPlan, s: PPSettings) -> None:
    st.subheader("Publish (Phase 3 — project design)")
    st.caption(
        "A publication plans its sub-tables from value counts with discrete Laplace noise (ε "
        "charged), then each row keeps its value with probability p_i, otherwise it gets a "
        "uniform value from its sub-table's domain. Rows are shuffled and a sub-table id is "
        "added. " + " ".join(STATED_LIMITS)
    )
    noise = current_noise()
    show_mode(noise)
    with user_errors():
        # the page's state, typed (ui.pp.request): what Publish is given, what a kept
        # publication holds, and whose fingerprint tells it stale
        request = PPPageRequest.of(s, release_options(choice, df, s, plan), noise)
        cost = prepared_of(choice, df, request).cost
    charge = ChargePlan.of(
        choice.registry, choice.dataset, cost.epsilon, cost.delta, seeded=not noise.is_secure
    )
    if release_button("Publish (perturb)", charge, key="pp_publish"):
        publish_step(choice, df, request)
    show_kept_outcome("pp")
    p = kept_publication()
    if p is None:
        return
    if not p.request.same_plan(request):  # another plan: that publication is gone
        drop_publication()
        return
    show_kept(p, request)
    owner_evaluation(p, df, plan)
    st.dataframe(p.publication.table.head(200), hide_index=True)
    downloads(p, plan)


page_setup()
st.title("⚖️ PP balancing")
st.write(
    "Randomizing a sensitive attribute (SA) over a small domain keeps far more of each value "
    "than randomizing over the whole domain. **PP** (Perturbation Partitioning) splits the table "
    "into *balanced* sub-tables, each with few SA values, and perturbs each one with its own "
    "retention probability p_i while keeping every posterior ≤ ρ2."
)
with user_errors():
    choice = choose_data("pp", DemoKind.TABLE)
    show_not_shown(choice, [PP_TOOL], key="pp")
    df = choice.one_table("PP balancing")
    settings = choose_settings(choice, df)
plan_step(choice, df, settings)  # before Publish: reads no SA value in analyst mode

if is_analyst():  # releases and public parameters only: no exact plan
    analyst_view(choice, df, settings)
    st.stop()

with user_errors():
    plan, counts = plan_for(df, settings)
st.info(EXACT_PLAN_NOTE)
overview(plan, settings.rho1)
if plan.status == STATUS_NOTHING:
    nothing_to_do(df, plan, settings)
phase1_stepper(plan, ExactPlanRequest.of(settings, counts))
t2_distribution(plan)
subtable_table(plan)
fallback_choice(plan)
publish_section(choice, df, plan, settings)
