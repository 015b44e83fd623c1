"""One spelling per symbol across the app (issue 32): `ui.glossary` rewrites `core`'s ASCII names
into the app's symbols, leaves code alone, and no page or `ui` text shows a forbidden spelling."""

from __future__ import annotations

import ast
import re
from fractions import Fraction
from pathlib import Path

import pytest

from core.balancing.params import validate_rhos
from core.errors import InputError
from ui.glossary import RHO1, RHO2, TERMS, forbidden, in_app

ROOT = Path(__file__).resolve().parents[2]
# what the app renders: its pages, its page helpers and its figures (core.viz is used by the
# app and the reports only; the CLI prints core's ASCII names on purpose)
APP_TEXT = [*ROOT.glob("pages/*.py"), *ROOT.glob("ui/**/*.py"), *ROOT.glob("core/viz/*.py")]
IDENTIFIER = re.compile(r"[\w.:/-]*")  # a key, a column id, a path: never shown as prose


def test_core_messages_are_rewritten_into_the_apps_symbols():
    assert (
        in_app("rho1 = 1/3 must be smaller than rho2 = 1/4")
        == "ρ1 = 1/3 must be smaller than ρ2 = 1/4"
    )
    assert in_app("PP at rho1 = 0.2, rho2 = 0.5 (plan epsilon 0.1)") == (
        "PP at ρ1 = 0.2, ρ2 = 0.5 (plan ε 0.1)"
    )
    assert (
        in_app("Epsilon 1 (delta 1e-05) meets every target") == "ε 1 (δ 1e-05) meets every target"
    )


@pytest.mark.parametrize(
    "code",
    [
        "dpx dataset add NAME --epsilon E",  # a flag
        "OPTIONS (epsilon = 1, delta = 1e-5)",  # SQL options
        "`location:0.5:method=auto` and `rho1`",  # inline code
        "max_epsilon_per_query, lh_eps, rho1_default",  # identifiers
        "HTF eps_height",
    ],
)
def test_code_is_never_rewritten(code):
    assert in_app(code) == code
    assert forbidden(code) == []


def test_forbidden_finds_every_ascii_spelling():
    for term in TERMS:
        for spelling in term.ascii:
            assert spelling in forbidden(f"the {spelling} of this release"), spelling
    assert forbidden("ρ1 = 1/3 and ρ2 = 2/3, ε 0.5, δ 0") == []


def test_the_glossary_has_one_entry_per_symbol():
    symbols = [t.symbol for t in TERMS]
    assert len(symbols) == len(set(symbols))
    spellings = [s for t in TERMS for s in t.ascii]
    assert len(spellings) == len(set(spellings))
    assert all(t.meaning.endswith(".") and t.symbol not in t.ascii for t in TERMS)


def _shown_strings(path: Path):
    """String constants of a module that can reach the screen: not docstrings, not keys."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docs
            and not IDENTIFIER.fullmatch(node.value)
        ):
            yield node.lineno, node.value


def test_no_page_or_ui_text_uses_a_forbidden_spelling():
    found = [
        f"{path.relative_to(ROOT)}:{line}: {bad} in {text[:80]!r}"
        for path in APP_TEXT
        if path.name != "glossary.py"
        for line, text in _shown_strings(path)
        if (bad := forbidden(text))
    ]
    assert found == [], "\n".join(found)


def test_a_core_error_reaches_the_page_in_the_apps_spelling():
    with pytest.raises(InputError) as exc:
        validate_rhos(Fraction(1, 2), Fraction(1, 3))
    message = in_app(str(exc.value))
    assert RHO1.symbol in message and RHO2.symbol in message
    assert forbidden(message) == []
