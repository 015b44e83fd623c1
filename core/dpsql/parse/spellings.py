"""Every DP aggregate's spellings, in one table: the parser, its refusals and their fixes read it.

A DP aggregate can be written in two query forms (spec §1.2, §2.4): the paper's
`SELECT WITH ANONYMIZATION` with `ANON_*` functions and positional bounds, and ZetaSQL's
`SELECT WITH DIFFERENTIAL_PRIVACY` with plain names and named bounds. Each row of `SPELLINGS`
says, for one name in one form, what it computes (`AggKind`; a COUNT's kind follows its
argument), where its bounds clamp (per group or per row), its positional shape, a percentile
its name fixes, an example with bounds, the same aggregate in the other form, and which plain
SQL aggregates (sqlglot's node keys) it is the DP spelling of. Nothing else lists them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from core.dpsql.parse.ir import AggKind


class Form(StrEnum):
    """The two query forms, by the words after SELECT WITH."""

    PAPER = "ANONYMIZATION"
    ZETA = "DIFFERENTIAL_PRIVACY"


class Clamp(StrEnum):
    """Where an aggregate's bounds apply: to a unit's total per group, or to each row."""

    GROUP = "group"
    ROW = "row"


@dataclass(frozen=True)
class Spelling:
    """One way to write a DP aggregate (see the module docstring)."""

    name: str  # as written, upper case
    form: Form
    kind: AggKind | None  # None: COUNT (rows for *, values for a column)
    clamp: Clamp
    example: str  # the call with bounds; {x} is the argument
    equivalent: str  # the same aggregate in the other form
    arguments: tuple[str, ...] = ("x", "L", "U")  # the paper form's positional arguments
    p: float | None = None  # the percentile the name fixes (MIN 0, MAX 1, MEDIAN 0.5)
    replaces: tuple[str, ...] = ()  # plain aggregates (sqlglot keys) it is the DP spelling of

    @property
    def takes_p(self) -> bool:
        """The percentile is an argument (ANON_NTILE, PERCENTILE_CONT)."""
        return self.kind is AggKind.QUANTILE and self.p is None

    @property
    def is_count(self) -> bool:
        return self.kind is None


_P, _Z, _G, _R = Form.PAPER, Form.ZETA, Clamp.GROUP, Clamp.ROW
_NTILE = ("x", "p", "L", "U")
_ZETA_GROUP = "contribution_bounds_per_group => (0, 100)"
_ZETA_ROW = "contribution_bounds_per_row => (0, 100)"

SPELLINGS: tuple[Spelling, ...] = (
    Spelling("ANON_COUNT", _P, None, _G, "ANON_COUNT({x}, 5)",
             "COUNT(x, contribution_bounds_per_group => (0, U))", ("x", "U"), replaces=("COUNT",)),
    Spelling("ANON_SUM", _P, AggKind.SUM, _G, "ANON_SUM({x}, 0, 100)",
             "SUM(x, contribution_bounds_per_group => (L, U))", replaces=("SUM",)),
    Spelling("ANON_AVG", _P, AggKind.AVG, _G, "ANON_AVG({x}, 0, 100)",
             "AVG(x, contribution_bounds_per_group => (L, U))", replaces=("AVG",)),
    Spelling("ANON_VAR", _P, AggKind.VAR, _R, "ANON_VAR({x}, 0, 100)",
             "VAR_POP(x, contribution_bounds_per_row => (L, U))"),
    Spelling("ANON_VAR_POP", _P, AggKind.VAR, _R, "ANON_VAR_POP({x}, 0, 100)",
             "the ZetaSQL form", replaces=("VARIANCEPOP",)),
    Spelling("ANON_STDDEV", _P, AggKind.STDDEV, _R, "ANON_STDDEV({x}, 0, 100)",
             "STDDEV_POP(x, contribution_bounds_per_row => (L, U))"),
    Spelling("ANON_STDDEV_POP", _P, AggKind.STDDEV, _R, "ANON_STDDEV_POP({x}, 0, 100)",
             "the ZetaSQL form", replaces=("STDDEVPOP",)),
    Spelling("ANON_NTILE", _P, AggKind.QUANTILE, _R, "ANON_NTILE({x}, 0.5, 0, 100)",
             "PERCENTILE_CONT(x, p, contribution_bounds_per_row => (L, U))", _NTILE),
    Spelling("ANON_PERCENTILE_CONT", _P, AggKind.QUANTILE, _R,
             "ANON_PERCENTILE_CONT({x}, 0.5, 0, 100)", "the ZetaSQL form", _NTILE),
    Spelling("ANON_MIN", _P, AggKind.QUANTILE, _R, "ANON_MIN({x}, 0, 100)", "the ZetaSQL form",
             p=0.0, replaces=("MIN",)),
    Spelling("ANON_MAX", _P, AggKind.QUANTILE, _R, "ANON_MAX({x}, 0, 100)", "the ZetaSQL form",
             p=1.0, replaces=("MAX",)),
    Spelling("ANON_MEDIAN", _P, AggKind.QUANTILE, _R, "ANON_MEDIAN({x}, 0, 100)",
             "the ZetaSQL form", p=0.5, replaces=("MEDIAN",)),
    Spelling("COUNT", _Z, None, _G, "COUNT({x}, contribution_bounds_per_group => (0, 5))",
             "ANON_COUNT(x, U)", replaces=("COUNT",)),
    Spelling("SUM", _Z, AggKind.SUM, _G, f"SUM({{x}}, {_ZETA_GROUP})", "ANON_SUM(x, L, U)",
             replaces=("SUM",)),
    Spelling("AVG", _Z, AggKind.AVG, _G, f"AVG({{x}}, {_ZETA_GROUP})", "ANON_AVG(x, L, U)",
             replaces=("AVG",)),
    Spelling("VAR_POP", _Z, AggKind.VAR, _R, f"VAR_POP({{x}}, {_ZETA_ROW})", "ANON_VAR(x, L, U)",
             replaces=("VARIANCEPOP",)),
    Spelling("STDDEV_POP", _Z, AggKind.STDDEV, _R, f"STDDEV_POP({{x}}, {_ZETA_ROW})",
             "ANON_STDDEV(x, L, U)", replaces=("STDDEVPOP",)),
    Spelling("PERCENTILE_CONT", _Z, AggKind.QUANTILE, _R,
             f"PERCENTILE_CONT({{x}}, 0.5, {_ZETA_ROW})", "ANON_NTILE(x, p, L, U)"),
)  # fmt: skip

BY_NAME: dict[str, Spelling] = {s.name: s for s in SPELLINGS}
assert len(BY_NAME) == len(SPELLINGS), "a name belongs to one form (ANON_ against plain)"
DP_NAMES = frozenset(BY_NAME)


def spelling(name: str) -> Spelling | None:
    """The DP aggregate written `name` (either form), or None."""
    return BY_NAME.get(name.upper())


def names(form: Form) -> tuple[str, ...]:
    """The DP aggregates of `form`, in the table's order."""
    return tuple(s.name for s in SPELLINGS if s.form is form)


def dp_spelling_of(plain: str, form: Form) -> Spelling | None:
    """The DP spelling, in `form`, of the plain aggregate whose sqlglot key is `plain`."""
    return next((s for s in SPELLINGS if s.form is form and plain.upper() in s.replaces), None)
