"""One governed release for any caller (CLI hooks, app pages): charge, compute, attach.

    release, result = charged_release(
        registry, "htf", "visits", [Mechanism("htf", eps)], noise.mode, params,
        compute=lambda: build_release(...), artefact_of=lambda r: {...released fields only...},
    )

Privacy claim: the registry's charge (ε, δ of `mechanisms`, basic composition against the
dataset's total and per-query caps) is committed in one transaction before `compute` runs, so a
refused request computes nothing and a failed computation stays charged (recorded as failed).
The artefact must hold released values and public parameters only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from core.registry.governed import compute_after_charge
from core.registry.models import Mechanism, Release
from core.registry.registry import Registry


def charged_release(
    registry: Registry,
    tool: str,
    dataset: str | None,
    mechanisms: Iterable[Mechanism],
    mode: str,
    params: dict,
    compute: Callable[[], Any],
    artefact_of: Callable[[Any], dict],
    privacy: dict | None = None,
) -> tuple[Release, Any]:
    """Charge `dataset` (None: an unregistered run, recorded only), then `compute()`, then
    attach `artefact_of(result)`. Raises `BudgetExceededError`/`InputError` on a refusal."""
    release = registry.charge(tool, dataset, params, mechanisms, mode, privacy)
    result = compute_after_charge(registry, release, compute)
    return registry.attach(release.id, artefact_of(result)), result
