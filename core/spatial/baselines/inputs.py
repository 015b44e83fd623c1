"""Argument checks, the up-front budget check and the noisy size shared by every baseline.

A release either fits the accountant's charge as a whole or nothing is drawn: `require` checks
the full eps_tot before the first draw, so a method never stops half-way with a partial spend.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from core.errors import InputError
from core.privacy import Accountant, Cost
from core.spatial.baselines.tree_counts import COUNT_BUDGETS
from core.spatial.common import N_SHARE, noisy_total
from core.spatial.unit import Unit

# A fixed height above this is never useful (h_max is 24 on the largest 4096 x 4096 grid);
# refusing it avoids planning thousands of empty levels.
MAX_HEIGHT = 64


def check_matrix(F: np.ndarray) -> np.ndarray:
    """F must be a 2-D matrix of non-negative integer counts."""
    F = np.asarray(F)
    if F.ndim != 2 or F.shape[0] < 1 or F.shape[1] < 1:
        raise InputError(
            f"the frequency matrix must be 2-D with at least one cell, got shape {F.shape}."
        )
    if not np.issubdtype(F.dtype, np.integer):
        raise InputError("the frequency matrix must hold integer counts; bin the points first.")
    if F.size and F.min() < 0:
        raise InputError("the frequency matrix has negative counts; it must count points per cell.")
    return F.astype(np.int64, copy=False)


def check_epsilon(eps_tot: float, eps_n: float = 0.0) -> None:
    """eps_tot > 0 finite; the noisy-N share must leave something for the mechanism."""
    if isinstance(eps_tot, bool) or not isinstance(eps_tot, int | float | np.number):
        raise InputError(f"epsilon must be a finite number > 0, got {eps_tot!r}.")
    if not (math.isfinite(eps_tot) and eps_tot > 0):
        raise InputError(f"epsilon must be a finite number > 0, got {eps_tot!r}.")
    if not (math.isfinite(eps_n) and 0 <= eps_n < eps_tot):
        raise InputError(
            f"eps_n (budget for the noisy number of points) must be in [0, epsilon) = [0, {eps_tot:g}), "
            f"got {eps_n!r}; lower eps_n or raise epsilon."
        )


def check_fraction(
    name: str, value: float, *, open_low: bool = True, open_high: bool = True
) -> None:
    lo_ok = value > 0 if open_low else value >= 0
    hi_ok = value < 1 if open_high else value <= 1
    if not (math.isfinite(value) and lo_ok and hi_ok):
        lo, hi = "(" if open_low else "[", ")" if open_high else "]"
        raise InputError(f"{name} must be in {lo}0, 1{hi}, got {value!r}.")


def check_positive(name: str, value: float) -> None:
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"{name} must be a finite number > 0, got {value!r}.")


def require(accountant: Accountant, method: str, eps_tot: float) -> None:
    """Refuse (`Overdraw`) before any draw if eps_tot does not fit the accountant's charge."""
    accountant.require(Cost(float(eps_tot)), f"{method} (the whole release)")


def size_budget(eps_tot: float, eps_n: float | None, public_n: float | None) -> float:
    """ε for the noisy N that sizes a structure: 0 with a declared public size `public_n`,
    else `eps_n`, or by default the share `N_SHARE` of eps_tot (reasoning: core/spatial/common.py)."""
    if public_n is not None:
        if isinstance(public_n, bool) or not (math.isfinite(public_n) and public_n >= 0):
            raise InputError(
                f"public_n (a declared public number of points) must be >= 0, got {public_n!r}."
            )
        return 0.0
    if eps_n is None:
        return N_SHARE * float(eps_tot)
    check_positive("eps_n", eps_n)
    return float(eps_n)


def sized_n(
    F: np.ndarray,
    eps_n: float,
    public_n: float | None,
    accountant: Accountant,
    method: str,
    unit: Unit,
) -> tuple[float, dict]:
    """(N used for sizing, info): the declared public size, or a noisy N drawn with eps_n."""
    if public_n is not None:
        return float(public_n), {"n_public": float(public_n)}
    n_hat = noisy_total(F, eps_n, accountant, method, unit)
    return n_hat, {"n_hat": n_hat}


def fixed_or_auto_height(height: int | str, name: str = "height") -> int | None:
    """None for "auto" (sized from a noisy N), else a validated fixed integer height."""
    if height == "auto":
        return None
    if isinstance(height, bool) or not isinstance(height, int | np.integer) or height < 0:
        raise InputError(f'{name} must be "auto" or an integer >= 0, got {height!r}.')
    if height > MAX_HEIGHT:
        raise InputError(f'{name} {height} is too large; use at most {MAX_HEIGHT} (or "auto").')
    return int(height)


def check_count_budget(count_budget: str) -> None:
    if count_budget not in COUNT_BUDGETS:
        raise InputError(
            f"count_budget must be one of {', '.join(COUNT_BUDGETS)}, got {count_budget!r}."
        )


def sized_height(
    F: np.ndarray,
    fixed: int | None,
    eps_n: float,
    public_n: float | None,
    accountant: Accountant,
    method: str,
    unit: Unit,
    height_from_n: Callable[[float], int],
) -> tuple[int, dict]:
    """The tree height: `fixed`, or `height_from_n` of a public or noisy N (`sized_n`).

    Returns (h, info) with info["n_hat"] when N was measured; the true N is never used.
    """
    if fixed is not None:
        return fixed, {}
    n, info = sized_n(F, eps_n, public_n, accountant, method, unit)
    return height_from_n(n), info
