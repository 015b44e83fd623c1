"""Owner vs analyst mode of the app, read from the environment (`DPX_MODE=analyst make run`).

Owner (default): the data owner's tool — previews, teaching views, evaluation against raw data,
seeded demo noise, unregistered uploads. Analyst: only registered datasets and their releases;
every number on screen is a release or a public parameter. No streamlit import here, so `core`
-style tests and pages can both use it.
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
