"""The PP page's release step, shared by the owner and analyst views.

`publish_step` is the ONE place this page makes a release: the widgets become a `PPParams`
once (`ui.pp.params.page_params`), `core.balancing.service.prepare` checks them and states the
cost, and `core.governance.pp.pp_request` builds the request, exactly as `dpx balance --perturb`
does. A PP release (`core.balancing.publish`) plans its sub-tables from
DP-noised value counts — the plan's ε (and, without declared categories, the δ of listing only
values above a noisy threshold) is charged to a registered dataset before the table is read — and
claims (ρ1, ρ2) per record for the randomized SA; a demo table or an upload is recorded as an
unregistered run (seeded runs as demo runs), exactly as `dpx balance --perturb` does. Each record
carries this browser session's id ("session") so a page can find what it paid for.

What is published beside the perturbed SA is the owner's decision (`core.balancing.columns`):
an analyst publishes exactly the columns the owner declared on the dataset
(`Dataset.publishable`, `dpx dataset policy NAME --pp-columns ...`) and cannot add one; the
owner chooses, and by default publishes the SA alone (on a registered dataset, among the
declared columns). The privacy-unit column is never published.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from core.balancing.columns import published_columns
from core.balancing.plan import PartitionPlan
from core.balancing.publish import Publication
from core.balancing.record import pp_artefact
from core.balancing.release import DEFAULT_PLAN_EPSILON
from core.balancing.service import PPPrepared, PPSource, prepare, run
from core.governance import govern
from core.governance.origin import Origin
from core.governance.pp import pp_request, prepared_or_refused
from ui import state
from ui.actions import queued
from ui.data import DataChoice, Source
from ui.outcomes import charged, governed, open_registry, recorded_text
from ui.pp.params import (
    PPSettings,
    ReleaseOptions,
    categories_of,
    default_categories,
)
from ui.pp.request import PPPageRequest
from ui.shell import is_analyst, role
from ui.state import kept, persist

PP_TOOL = "pp"
PUBLICATION = "pp_publication"


@dataclass(frozen=True)
class Published:
    """A publication kept for the session: what was released, the typed request it was made
    with (`ui.pp.request.PPPageRequest`; stale when its fingerprint differs from the page's)
    and what the registry recorded."""

    publication: Publication
    request: PPPageRequest
    recorded: str
    release_id: int | None

    @property
    def settings(self) -> PPSettings:
        return self.request.settings

    @property
    def seed(self) -> int | None:
        """The demo noise's seed (None: secure noise)."""
        return self.request.seed


def release_options(
    choice: DataChoice, df: pd.DataFrame, s: PPSettings, exact: PartitionPlan | None
) -> ReleaseOptions:
    """The published columns, the plan's ε, the SA's categories and the fallback. `exact`: the
    owner's exact (teaching) plan, None for an analyst."""
    columns = _columns(choice, df, s.sa)
    epsilon = st.number_input(
        "ε for the partition plan (charged; smaller: more privacy, a noisier plan)",
        min_value=0.01, max_value=10.0, step=0.1, persist_state="session",
        key=persist("pp_plan_epsilon", DEFAULT_PLAN_EPSILON),
        help="The published sub-tables are planned from value counts with discrete Laplace noise "
        "of scale 2/ε (sensitivity 2: one record's value changes two counts by one).",
    )  # fmt: skip
    categories = _categories(choice, s.sa, exact)
    fallback = False
    if exact is None or not exact.refused:
        fallback = st.checkbox(
            "If the noisy plan is refused, publish the whole table as one sub-table "
            "(single-table fallback)", key="pp_accept_fallback_release",
        )  # fmt: skip
    else:
        fallback = True  # accepted above, for the exact plan's refusal
    return ReleaseOptions(columns, float(epsilon), categories, fallback)


def _categories(choice: DataChoice, sa: str, exact: PartitionPlan | None) -> tuple[str, ...] | None:
    """The SA's categories declared public, typed by the person (owner and analyst alike: a
    publication with them costs δ = 0, as `dpx balance --categories`). The default: a demo
    table's (owner only: read from the public demo table), a registered dataset's schema's
    for the SA; never read from a registered table's data."""
    demo = choice.source is Source.DEMO
    default = default_categories(choice.dataset, sa)
    if not default and demo and exact is not None and not is_analyst():
        default = ", ".join(exact.canonical)
    text = st.text_input(
        "Categories of the SA, declared public (comma-separated; empty: read from the data, "
        "each listed only above a noisy threshold)", persist_state="session",
        key=persist(f"pp_categories_{choice.key}_{sa}", default),
        help="Declared categories are public, so listing them costs nothing (δ = 0). Read "
        "from the data, a value is listed only when its noisy count reaches a threshold, so "
        "a value held by a few records is not revealed (δ ≤ 1e-6). A value outside the "
        "declared list gets no slot in the plan.",
    )  # fmt: skip
    if default and default == text and not demo:
        st.caption("Prefilled with the categories the data owner declared in the schema.")
    elif demo and not is_analyst():
        st.caption("Demo table: its categories are public and prefilled from the table.")
    return categories_of(text)


def prepared_of(choice: DataChoice, df: pd.DataFrame, request: PPPageRequest) -> PPPrepared:
    """The page's publication, prepared (`core.balancing.service.prepare`: no data read) —
    the same object `dpx balance --perturb` prepares from the same choices."""
    return prepare(request.params(), PPSource.of_frame(df, choice.dataset))


def _columns(choice: DataChoice, df: pd.DataFrame, sa: str) -> tuple[str, ...]:
    table = [str(c) for c in df.columns]
    dataset = choice.dataset
    unit = dataset.uid if dataset is not None else None
    declared = list(dataset.publishable) if dataset is not None else []
    if is_analyst():
        columns = published_columns(table, sa, unit, declared)
        others = [c for c in columns if c != sa]
        st.markdown(
            f"Published: the perturbed **{sa}** and the sub-table id"
            + (
                ", with the columns the data owner declared publishable: "
                + ", ".join(f"`{c}`" for c in others)
                if others
                else "; the data owner declared no other column publishable"
            )
            + ". Only the owner changes that (`dpx dataset policy NAME --pp-columns ...`)."
        )
        return tuple(columns)
    choices = [c for c in table if c not in (sa, unit)]
    if dataset is not None:  # a registered dataset: among the columns its owner declared
        choices = [c for c in choices if c in declared]
    chosen = st.multiselect(
        "Columns published unchanged next to the SA (none by default: PP protects the SA only, "
        "and each column makes a record's row linkable to the person)",
        choices, persist_state="session", key=kept(f"pp_keep_{choice.key}", choices, []),
    )  # fmt: skip
    if dataset is None:
        return tuple(published_columns(table, sa, unit, chosen))
    return tuple(published_columns(table, sa, unit, declared, [sa, *chosen]))


def publish_step(choice: DataChoice, df: pd.DataFrame, request: PPPageRequest) -> Published | None:
    """Charge, publish (recorded in the registry) and keep the publication for the session.

    Privacy claim: ((ρ1, ρ2) per record for the SA) + ((ε, δ) = `prepared.cost` for the
    partition plan, unit: `prepared.unit`; δ = 0 with declared categories), charged before the
    table is read; the columns in `request.options.columns`
    other than the SA are published unchanged and are not protected."""
    state.drop(PUBLICATION)  # a refused publish leaves no earlier table on screen
    registry = choice.registry if choice.dataset is not None else open_registry()
    noise = request.noise
    door = Origin.app(state.session_id(), data=request.data, seed=noise.seed, noise=noise.mode,
                    role=role().value)  # fmt: skip
    with governed("Publish", key="pp"):
        source = PPSource.of_frame(df, choice.dataset)
        prepared = prepared_or_refused(registry, request.params(), source, door)
        governed_request = pp_request(
            prepared, role=role(), dataset=choice.dataset, noise=noise, door=door
        )
        with queued("Publishing…"):
            done = govern(
                registry,
                governed_request,
                lambda accountant: run(prepared, accountant),
                lambda pub: pp_artefact(pub.metadata, len(pub.table)).to_json(),
            )
        release, pub = done.record, done.result
        kept_pub = Published(
            pub, request, recorded_text(release, "Publication", registry),
            None if release is None else release.id,
        )  # fmt: skip
        state.put(PUBLICATION, kept_pub, "the publication")
        state.mark_shown([kept_pub.release_id])
        charged(choice.dataset)
        return kept_pub
    return None


def kept_publication() -> Published | None:
    """The publication kept for the session (one kept by an older page version is dropped)."""
    return state.current(PUBLICATION, Published, PPPageRequest)


def drop_publication() -> None:
    state.drop(PUBLICATION)
