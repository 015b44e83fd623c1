"""Owner vs analyst mode of the app, read from the environment (`DPX_MODE=analyst make run`).

Owner (default): the data owner's tool — previews, teaching views, evaluation against raw data,
seeded demo noise, unregistered uploads. Analyst: only registered datasets and their releases;
every number on screen is a release or a public parameter. `app_mode` needs no streamlit;
`registered_dataset_picker` is the widget pages use to work on a registered dataset.
"""

from __future__ import annotations

import os
from enum import StrEnum

ENV_VAR = "DPX_MODE"


class AppMode(StrEnum):
    OWNER = "owner"
    ANALYST = "analyst"


def app_mode() -> AppMode:
    """`DPX_MODE` (owner | analyst; default owner). An unknown value fails closed: analyst."""
    value = os.environ.get(ENV_VAR, "").strip().lower()
    if value in ("", AppMode.OWNER.value):
        return AppMode.OWNER
    return AppMode.ANALYST


def is_analyst() -> bool:
    return app_mode() is AppMode.ANALYST


def registered_dataset_picker(label: str = "Registered dataset", key: str = "dpx_registered"):
    """A selectbox of the registry's datasets with the chosen one's budget as a caption.

    Returns `(registry, dataset)` — the dataset's files verified unchanged (a changed file
    raises `InputError`, for `user_errors()`) — or None when nothing is registered. A page
    charges releases through `core.registry.release_flow.charged_release` (or, for DP SQL, a
    `core.registry.ledger.RegistryLedger`), so reloads, restarts, other sessions and `dpx`
    all see one budget. Seeded noise is allowed only when `dataset.teaching`.
    """
    import streamlit as st

    from core.registry import Registry

    registry = Registry()
    datasets = registry.datasets()
    if not datasets:
        st.info(
            "No registered dataset. The data owner registers one with "
            "`dpx dataset add NAME --table T=FILE --epsilon E`."
        )
        return None
    # persist_state: the picker sits behind a page's source choice; when hidden, keep the choice
    name = st.selectbox(label, [d.name for d in datasets], key=key, persist_state="session")
    dataset = registry.dataset(name)
    registry.verify_files(dataset)
    eps_spent, delta_spent = registry.spent(name)
    p = dataset.policy
    st.caption(
        f"Budget of **{name}**: ε spent {eps_spent:g} of {p.epsilon_total:g}, δ spent "
        f"{delta_spent:g} of {p.delta_total:g} (basic composition; the owner sets totals with "
        "`dpx dataset budget`)."
    )
    return registry, dataset
