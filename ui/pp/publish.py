"""The PP page's release step, shared by the owner and analyst views.

`publish_step` is the ONE place this page makes a release (the lead rewires it to
`core.governance.govern`). A PP release (`core.balancing.publish`) plans its sub-tables from
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

from core.balancing.columns import parse_columns, published_columns
from core.balancing.persons import unit_words
from core.balancing.plan import PartitionPlan
from core.balancing.publish import Publication, publish
from core.balancing.record import pp_artefact
from core.balancing.release import DEFAULT_PLAN_EPSILON, ReleaseSettings
from core.governance import Request, govern
from core.privacy import Noise
from core.registry import Claim
from ui import state
from ui.data import DataChoice, Source
from ui.outcomes import charged, governed, open_registry, recorded_text
from ui.pp.inputs import PPSettings
from ui.shell import is_analyst, role
from ui.state import kept, persist

PP_TOOL = "pp"
PUBLICATION = "pp_publication"


@dataclass(frozen=True)
class ReleaseOptions:
    """What the person chose for the release (beside the plan's settings)."""

    columns: tuple[str, ...]  # published: the SA and the declared/chosen columns, table order
    plan_epsilon: float
    categories: tuple[str, ...] | None  # declared public; None: read above a noisy threshold
    accept_fallback: bool

    def release_settings(self, s: PPSettings) -> ReleaseSettings:
        rho1, rho2 = s.rho_values
        return ReleaseSettings(
            rho1, rho2, plan_epsilon=self.plan_epsilon, tie_policy=s.tie, merge_policy=s.merge,
            missing=s.missing, accept_fallback=self.accept_fallback, categories=self.categories,
        )  # fmt: skip


@dataclass(frozen=True)
class Published:
    """A publication kept for the session: what was released and how it was made."""

    publication: Publication
    settings: PPSettings
    options: ReleaseOptions
    noise: dict  # Noise.describe()
    recorded: str
    release_id: int | None

    @property
    def seed(self) -> int | None:
        return self.noise.get("seed") if self.noise.get("mode") == "seeded" else None


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
    categories = None
    if not is_analyst():
        demo = choice.source is Source.DEMO
        text = st.text_input(
            "Categories of the SA, declared public (comma-separated; empty: read from the data, "
            "each listed only above a noisy threshold)", persist_state="session",
            key=persist(f"pp_categories_{choice.key}_{s.sa}",
                        ", ".join(exact.canonical) if demo and exact is not None else ""),
            help="Declared categories are public, so listing them costs nothing (δ = 0). Read "
            "from the data, a value is listed only when its noisy count reaches a threshold, so "
            "a value held by a few records is not revealed (δ ≤ 1e-6).",
        )  # fmt: skip
        if demo:
            st.caption("Demo table: its categories are public and prefilled from the table.")
        categories = tuple(parse_columns(text)) or None
    fallback = False
    if exact is None or not exact.refused:
        fallback = st.checkbox(
            "If the noisy plan is refused, publish the whole table as one sub-table "
            "(single-table fallback)", key="pp_accept_fallback_release",
        )  # fmt: skip
    else:
        fallback = True  # accepted above, for the exact plan's refusal
    return ReleaseOptions(columns, float(epsilon), categories, fallback)


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


def publish_step(
    choice: DataChoice, df: pd.DataFrame, s: PPSettings, options: ReleaseOptions, noise: Noise
) -> Published | None:
    """Charge, publish (recorded in the registry) and keep the publication for the session.

    Privacy claim: ((ρ1, ρ2) per record for the SA) + (ε for the partition plan, unit: one
    record's SA value), ε charged before the table is read; the columns in `options.columns`
    other than the SA are published unchanged and are not protected."""
    state.drop(PUBLICATION)  # a refused publish leaves no earlier table on screen
    registry = choice.registry if choice.dataset is not None else open_registry()
    params = {
        **s.params(), "columns": list(options.columns), "plan_epsilon": options.plan_epsilon,
        "categories": list(options.categories or []), "accept_fallback": options.accept_fallback,
        "noise": noise.mode, "via": "app", "session": state.session_id(), "role": role().value,
    }  # fmt: skip
    unit = choice.dataset.uid if choice.dataset is not None else None
    with governed("Publish", key="pp"):
        settings = options.release_settings(s)
        request = Request(
            tool=PP_TOOL,
            role=role(),
            dataset=choice.dataset,
            params=params,
            cost=settings.cost,
            claim=Claim(unit_words(unit), unit, str(settings.rho1), str(settings.rho2)),
            noise=noise,
            rho=settings.claim,
        )
        done = govern(
            registry,
            request,
            lambda accountant: publish(
                df, s.sa, list(options.columns), settings, accountant, unit=unit
            ),
            lambda pub: pp_artefact(pub.metadata, len(pub.table)).to_json(),
        )
        release, pub = done.record, done.result
        kept_pub = Published(
            pub, s, options, noise.describe(), recorded_text(release, "Publication", registry),
            None if release is None else release.id,
        )  # fmt: skip
        state.put(PUBLICATION, kept_pub, "the publication")
        state.mark_shown([kept_pub.release_id])
        charged(choice.dataset)
        return kept_pub
    return None


def kept_publication() -> Published | None:
    return state.get(PUBLICATION)


def drop_publication() -> None:
    state.drop(PUBLICATION)
