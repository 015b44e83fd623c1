"""The report's "Composition" section: the dataset's cumulative ε at its total δ under basic
and pld accounting, release by release up to this release (`core.privacy.composition`), from
the registry's charges and recorded mechanisms only."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import core.reports.common as common
from core.privacy.composition import CumulativePoint

MAX_REPORT_POINTS = 20  # rows of the table (a longer history is sampled, the last kept)


def section(points: Sequence[CumulativePoint], delta_total: float, accounting: str) -> str:
    rows = [
        [p.count, f"#{p.id}", p.basic_epsilon, p.basic_delta, p.pld_epsilon, p.pld_method]
        for p in points
    ]
    return (
        f"<p>How this dataset's releases compose, up to and including this one: basic "
        f"accounting's sum of ε, and pld's ε at the dataset's total δ {delta_total:g} "
        f"(privacy loss distributions, never above basic). The dataset is charged under "
        f"<b>{escape(accounting)}</b>.</p>"
        + common.table(
            [
                "releases",
                "last release",
                "ε basic (sum)",
                "δ basic (sum)",
                f"ε pld (at δ {delta_total:g})",
                "pld figure",
            ],
            rows,
            "composition",
        )  # fmt: skip
    )
