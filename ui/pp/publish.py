"""The PP page's release step, shared by the owner and analyst views.

`publish_step` is the ONE place this page makes a release (the lead rewires it to
`core.governance.govern`). A registered dataset's publication is a release of tool "pp" — a
(ρ1, ρ2) publication, not ε-DP, so no ε is charged — and a demo table or an upload is recorded
as an unregistered run (seeded runs as demo runs), exactly as `dpx balance` does. Each record
carries this browser session's id ("session") so a page can find what it paid for.

What is published beside the perturbed SA is the owner's decision: `publishable_columns`.
An analyst publishes exactly the columns the owner declared on the dataset
(`Dataset.publishable`, set with `dpx dataset policy NAME --pp-columns ...`) and cannot add one;
the owner chooses, and by default publishes the SA alone (a registered dataset: its declared
columns). The privacy-unit column is never published.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from core.balancing.plan import PartitionPlan
from core.balancing.publish import Publication, publish
from core.privacy import Noise
from core.registry import Registry
from core.registry.release_flow import charged_release
from ui import state
from ui.data import DataChoice
from ui.outcomes import charged, governed, open_registry, recorded_text
from ui.pp.inputs import PPSettings
from ui.shell import is_analyst, role
from ui.state import kept

PP_TOOL = "pp"
PUBLICATION = "pp_publication"


@dataclass(frozen=True)
class Published:
    """A publication kept for the session: what was released and how it was made."""

    publication: Publication
    settings: PPSettings
    columns: tuple[str, ...]  # published unchanged beside the SA
    accept_fallback: bool
    noise: dict  # Noise.describe()
    recorded: str
    release_id: int | None

    @property
    def seed(self) -> int | None:
        return self.noise.get("seed") if self.noise.get("mode") == "seeded" else None


def publishable_columns(choice: DataChoice, df: pd.DataFrame, sa: str) -> tuple[str, ...]:
    """The columns published unchanged beside the perturbed SA (never the unit column)."""
    unit = choice.dataset.uid if choice.dataset is not None else None
    others = [str(c) for c in df.columns if str(c) not in (sa, unit)]
    declared = [c for c in (choice.dataset.publishable if choice.dataset else ()) if c in others]
    if is_analyst():
        st.markdown(
            f"Published: the perturbed **{sa}** and the sub-table id"
            + (
                ", with the columns the data owner declared publishable: "
                + ", ".join(f"`{c}`" for c in declared)
                if declared
                else "; the data owner declared no other column publishable"
            )
            + ". Only the owner changes that (`dpx dataset policy NAME --pp-columns ...`)."
        )
        return tuple(declared)
    chosen = st.multiselect(
        "Columns to publish unchanged beside the SA (the others are removed; PP protects the "
        "SA only — a column published here is released exactly as it is)",
        others, persist_state="session",
        key=kept(f"pp_keep_{choice.key}", others, declared),
    )  # fmt: skip
    return tuple(chosen)


def publish_step(
    choice: DataChoice,
    df: pd.DataFrame,
    plan: PartitionPlan,
    settings: PPSettings,
    columns: tuple[str, ...],
    accept_fallback: bool,
    noise: Noise,
) -> Published | None:
    """Publish (recorded in the registry) and keep the publication for the session.

    Privacy claim: the publication is (ρ1, ρ2)-private per record for the SA (PP balancing,
    spec pp.md), not ε-DP; it is recorded with no ε charged. The columns in `columns` are
    published unchanged and are not protected."""
    state.drop(PUBLICATION)  # a refused publish leaves no earlier table on screen
    registry = choice.registry if choice.dataset is not None else open_registry()
    others = [str(c) for c in df.columns if str(c) != settings.sa]
    drop = [c for c in others if c not in columns]
    params = {
        **settings.params(), "columns": list(columns), "drop": drop,
        "accept_fallback": accept_fallback, "noise": noise.mode, "via": "app",
        "session": state.session_id(), "role": role().value,
    }  # fmt: skip
    with governed("Publish", key="pp"):
        release, pub = _publish_recorded(
            registry, choice.dataset_name, settings, params,
            lambda: publish(
                df, settings.sa, plan, noise, accept_fallback=accept_fallback,
                missing=settings.missing, drop_columns=drop, record_order=settings.record_order,
            ),
        )  # fmt: skip
        kept_pub = Published(
            pub, settings, columns, accept_fallback, noise.describe(),
            recorded_text(release, "Publication"), None if release is None else release.id,
        )  # fmt: skip
        state.put(PUBLICATION, kept_pub, "the publication")
        state.mark_shown([kept_pub.release_id])
        charged(choice.dataset)
        return kept_pub
    return None


def _publish_recorded(registry: Registry | None, dataset: str | None, s: PPSettings, params, run):
    """Record (nothing charged: PP is not ε-DP), then run. Without a registry (it could not be
    opened) an unregistered publication is made unrecorded, as `dpx balance` does."""
    if registry is None:
        return None, run()
    release, pub = charged_release(
        registry, PP_TOOL, dataset, [], params["noise"], params, compute=run,
        artefact_of=lambda pub: {
            "published_metadata": pub.metadata,
            "rows": len(pub.table),
            "columns": [str(c) for c in pub.table.columns],
        },
        privacy={
            "model": "(rho1, rho2)-privacy (PP balancing); not epsilon-DP",
            "rho1": s.rho1, "rho2": s.rho2, "unit": "one record",
        },
    )  # fmt: skip
    return release, pub


def kept_publication() -> Published | None:
    return state.get(PUBLICATION)


def drop_publication() -> None:
    state.drop(PUBLICATION)
