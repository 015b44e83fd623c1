"""Who is asking: the data owner or an analyst. One variable for the app and the CLI.

`DPX_MODE=analyst` (the app: `DPX_MODE=analyst make run`; the CLI: `DPX_MODE=analyst dpx ...`).
Unset or `owner` is the owner; any other value fails closed to analyst. An analyst sees only
releases and public parameters: registered datasets only, secure noise only, no teaching or
evaluation output, and every value shown is rendered from the release record.
"""

from __future__ import annotations

import os
from enum import StrEnum

from core.errors import InputError

ENV_VAR = "DPX_MODE"
# The analyst's declared identity (per-analyst shares, issue 33): `DPX_ANALYST=alice dpx ...`,
# and for the app the same variable set for its server process (one analyst per server). It is
# declared, not authenticated: see docs/registry.md for what it protects.
ANALYST_VAR = "DPX_ANALYST"


class Role(StrEnum):
    OWNER = "owner"
    ANALYST = "analyst"


def current_role(environ=None) -> Role:
    """`DPX_MODE` (owner | analyst; default owner). An unknown value fails closed: analyst."""
    value = (environ if environ is not None else os.environ).get(ENV_VAR, "").strip().lower()
    if value in ("", Role.OWNER.value):
        return Role.OWNER
    return Role.ANALYST


class RoleError(InputError):
    """A request the current role does not allow (exit 2, one line)."""


def require_owner(role: Role, what: str) -> None:
    """Refuse `what` in analyst mode with one line that says why and who may do it."""
    if role is Role.ANALYST:
        raise RoleError(
            f"{what} is for the data owner; analyst mode ({ENV_VAR}=analyst) sees only "
            "releases of registered datasets and public parameters."
        )


def current_analyst(environ=None) -> str | None:
    """The analyst's declared identity (`DPX_ANALYST`), or None when none is declared."""
    value = (environ if environ is not None else os.environ).get(ANALYST_VAR, "").strip()
    return value or None
