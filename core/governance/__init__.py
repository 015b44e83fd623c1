"""Governance: the one flow every release takes (role, policies, charge, compute, attach)."""

from core.governance.flow import (
    ComputeFailed,
    Governed,
    Request,
    Undelivered,
    check_fits,
    check_policies,
    govern,
)
from core.governance.roles import Role, RoleError, current_analyst, current_role, require_owner

__all__ = [
    "ComputeFailed",
    "Governed",
    "Request",
    "Role",
    "RoleError",
    "Undelivered",
    "check_fits",
    "check_policies",
    "current_analyst",
    "current_role",
    "govern",
    "require_owner",
]
