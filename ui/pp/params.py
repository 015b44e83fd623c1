"""The PP page's choices as typed values, and their one conversion to `PPParams` (issue 28).

No Streamlit here: `page_params` is the page's door to `core.balancing.service`, as
`core.cli.balance.pp_params` is the CLI's, so a test compares the two without running a page.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from core.balancing.columns import parse_columns
from core.balancing.params import parse_rho
from core.balancing.release import ReleaseSettings
from core.balancing.service import PPParams, declared_categories
from core.registry import Dataset


@dataclass(frozen=True)
class PPSettings:
    """Everything the plan and the publication are made from (public parameters)."""

    data: str  # the DataChoice key
    sa: str
    rho1: str
    rho2: str
    missing: str  # "error" (none missing) | "drop" | "category"
    tie: str
    merge: str

    @property
    def rho_values(self) -> tuple[Fraction, Fraction]:
        return parse_rho(self.rho1, "ρ1"), parse_rho(self.rho2, "ρ2")


@dataclass(frozen=True)
class ReleaseOptions:
    """What the person chose for the release (beside the plan's settings)."""

    columns: tuple[str, ...]  # published: the SA and the declared/chosen columns, table order
    plan_epsilon: float
    categories: tuple[str, ...] | None  # declared public; None: the schema's, else the data's
    accept_fallback: bool

    def release_settings(self, s: PPSettings) -> ReleaseSettings:
        rho1, rho2 = s.rho_values
        return ReleaseSettings(
            rho1, rho2, plan_epsilon=self.plan_epsilon, tie_policy=s.tie, merge_policy=s.merge,
            missing=s.missing, accept_fallback=self.accept_fallback, categories=self.categories,
        )  # fmt: skip


def categories_of(text: str) -> tuple[str, ...] | None:
    """The categories typed in the page's field ("a, b, c"), or None when it is empty — the
    same parsing as the CLI's --categories."""
    return tuple(parse_columns(text)) or None


def default_categories(dataset: Dataset | None, sa: str) -> str:
    """The categories field's default on a registered dataset: the ones its owner declared in
    the SA column's schema (public), else empty. Never read from the data."""
    declared = declared_categories(dataset, sa)
    return "" if declared is None else ", ".join(declared)


def page_params(s: PPSettings, options: ReleaseOptions) -> PPParams:
    """The typed parameters of a publication from the page's widgets (the SA is in
    `options.columns`; the others are the columns asked beside it)."""
    rho1, rho2 = s.rho_values
    return PPParams(
        sa=s.sa,
        rho1=rho1,
        rho2=rho2,
        categories=options.categories,
        missing=s.missing,  # type: ignore[arg-type]
        columns=tuple(c for c in options.columns if c != s.sa),
        plan_epsilon=float(options.plan_epsilon),
        tie_policy=s.tie,
        merge_policy=s.merge,
        accept_fallback=options.accept_fallback,
        perturb=True,
        engine="pandas",
    )
