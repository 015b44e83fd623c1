"""Names and texts a PP publication shares across the in-memory path, Spark, the CLI and pages."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from core.privacy import Noise

SUBTABLE_COLUMN = "subtable"
# In the file name AND as an extra first column (the CSV header) of a publication made with
# seeded noise: whoever has the seed can undo the randomization.
SEEDED_MARKER = "SEEDED-demo-not-private"
SEEDED_VALUE = "seeded"

STATED_LIMITS = (
    "The (rho1, rho2) guarantee is per record and per single SA' value.",
    "Non-SA' values are not protected by design, because their prior already exceeds rho1.",
    "D_i reveals 'SA is in D_i' for the records of sub-table i.",
)


def frac(x: Fraction | None) -> str | None:
    """Exact JSON form of a Fraction: "a/b", or "n" when whole."""
    if x is None:
        return None
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def published_name(name: str | Path, noise: Noise) -> Path:
    """The file name for a published CSV: with seeded noise, `SEEDED_MARKER` is inserted before
    the suffix (unless already present) so the file says it is a reproducible demo, not a
    private release (whoever has the seed can undo the randomization)."""
    path = Path(name)
    if noise.is_secure or SEEDED_MARKER in path.name:
        return path
    return path.with_name(f"{path.stem}.{SEEDED_MARKER}{path.suffix or '.csv'}")
