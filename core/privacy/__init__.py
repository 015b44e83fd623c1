"""Privacy primitives shared by every capability: noise, the budget ledger, accuracy."""

from core.privacy.accuracy import (
    discrete_laplace_half_width,
    discrete_laplace_tail,
    laplace_half_width,
)
from core.privacy.budget import BudgetLedger, Spend, make_spend
from core.privacy.noise import SEEDED_LABEL, Noise

__all__ = [
    "SEEDED_LABEL",
    "BudgetLedger",
    "Noise",
    "Spend",
    "discrete_laplace_half_width",
    "discrete_laplace_tail",
    "laplace_half_width",
    "make_spend",
]
