"""One spelling per symbol across the app: the glossary every page draws from.

The CLI and `core`'s messages use ASCII names (`--epsilon`, `rho1`), which the app shows as the
symbols below; `in_app(text)` rewrites a message from `core` into the app's spelling before a
page shows it (`ui.outcomes.user_errors`, the planners' sentences). Code stays as written: a
span in backticks, a command-line flag (`--epsilon`), a SQL option (`epsilon = 1`) or a name
with an underscore (`max_epsilon`) is never rewritten. `tests/app/test_glossary.py` scans the
pages' and `ui`'s text for the spellings listed in `Term.ascii`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import streamlit as st


@dataclass(frozen=True)
class Term:
    """A symbol as the app writes it, what it means in one plain sentence, and the spellings the
    app never shows (the CLI's and `core`'s ASCII names for it)."""

    symbol: str
    name: str
    meaning: str
    ascii: tuple[str, ...]
    sql_option: bool = False  # `name = value` is a SQL option (OPTIONS (epsilon = 1)): code


EPSILON = Term(
    "ε", "epsilon",
    "the privacy budget a release spends: smaller means more privacy and more noise.",
    ("epsilon", "Epsilon", "eps"),
    sql_option=True,
)  # fmt: skip
DELTA = Term(
    "δ", "delta",
    "the small chance that the ε promise does not hold (0 for pure ε releases).",
    ("delta", "Delta"),
    sql_option=True,
)  # fmt: skip
RHO1 = Term(
    "ρ1", "rho 1",
    "PP: a value is protected when its share of the table is at most ρ1 (an attacker's "
    "belief before seeing the release).",
    ("rho1", "rho_1", "rho 1", "Rho1"),
)  # fmt: skip
RHO2 = Term(
    "ρ2", "rho 2",
    "PP: how far that belief may rise after seeing the release (ρ1 < ρ2 < 1).",
    ("rho2", "rho_2", "rho 2", "Rho2"),
)  # fmt: skip
BETA = Term(
    "β", "beta",
    "PP: how many SA values each balanced group holds equally (⌊|T| / f_max⌋).",
    ("beta",),
)  # fmt: skip
MRE = Term(
    "MRE", "mean relative error",
    "how far noisy answers to range queries are from the true ones, on average (evaluation "
    "only: it uses the raw data).",
    (),
)  # fmt: skip

TERMS: tuple[Term, ...] = (EPSILON, DELTA, RHO1, RHO2, BETA, MRE)

# a span the app shows as code: `...` (inline code) — never rewritten, never flagged
_CODE = re.compile(r"`[^`]*`")


def _pattern(spelling: str, sql_option: bool) -> re.Pattern:
    # not part of a flag (--epsilon), an identifier (max_epsilon, rho1_default), a path, or
    # (for ε and δ) a SQL option (epsilon = 1)
    option = r"(?!\s*=)" if sql_option else ""
    return re.compile(rf"(?<![-\w./]){re.escape(spelling)}(?!\w){option}")


_RULES: tuple[tuple[re.Pattern, str], ...] = tuple(
    (_pattern(spelling, term.sql_option), term.symbol)
    for term in TERMS
    for spelling in sorted(term.ascii, key=len, reverse=True)
)


def _outside_code(text: str, fn) -> str:
    """Apply `fn` to the parts of `text` that are not inline code."""
    out, last = [], 0
    for m in _CODE.finditer(text):
        out.append(fn(text[last : m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(fn(text[last:]))
    return "".join(out)


def in_app(text: str) -> str:
    """`text` (e.g. a message from `core`, shared with the CLI) in the app's spelling."""

    def rewrite(part: str) -> str:
        for pattern, symbol in _RULES:
            part = pattern.sub(symbol, part)
        return part

    return _outside_code(text, rewrite)


def forbidden(text: str) -> list[str]:
    """The ASCII spellings `text` shows where the app writes a symbol (empty: it is clean)."""
    found: list[str] = []

    def scan(part: str) -> str:
        for term in TERMS:
            for spelling in term.ascii:
                if _pattern(spelling, term.sql_option).search(part):
                    found.append(spelling)
        return part

    _outside_code(text, scan)
    return found


def show_glossary(*terms: Term) -> None:
    """A closed expander with the symbols a page uses, in the glossary's words."""
    with st.expander("Symbols on this page"):
        st.markdown("\n".join(f"- **{t.symbol}** ({t.name}): {t.meaning}" for t in terms))
