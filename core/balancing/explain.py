"""Plain-text explanations of one Phase-1 step (the page's numbers panel; spec section 7)."""

from __future__ import annotations

from fractions import Fraction

from core.balancing.phase1 import TraceRow


def _f(x: Fraction | int) -> str:
    x = Fraction(x)
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def phi_text(row: TraceRow, beta: int, beta_name: str = "β") -> str:
    """E.g. "φ(fβ) = 42/3 − max{12 − 6, 5} = 8 ≥ fβ = 6 ⇒ h = fβ = 6"."""
    f1, fb, fb1 = row.f1[1], row.fb[1], row.fb1[1]
    head = f"φ(f{beta_name}) = {row.n0}/{beta} − max{{{f1} − {fb}, {fb1}}} = {_f(row.phi)}"
    if row.branch == "h=fb":
        text = f"{head} ≥ f{beta_name} = {fb} ⇒ h = f{beta_name} = {row.h}"
    else:
        text = f"{head} < f{beta_name} = {fb} ⇒ h = ⌊{row.n0}/{beta} − {fb1}⌋ = {row.h}"
    if row.h == 0:
        text += " ⇒ h = 0: the whole remainder becomes the last group"
    return text


def balance_text(row: TraceRow, beta: int, beta_name: str = "β") -> str:
    """E.g. "|T0|/f1 = 24/6 = 4 ≥ β = 3 ✓", or "T0 empty — done"."""
    if row.n_after == 0:
        return "T0 empty — done"
    ratio = Fraction(row.n_after, row.f1_after)
    shown = f"{row.n_after}/{row.f1_after}"
    if _f(ratio) != shown:
        shown += f" = {_f(ratio)}"
    mark = "✓" if row.balanced_after else "✗ INTERNAL ERROR: T0 is no longer balanced"
    return f"|T0|/f1 = {shown} ≥ {beta_name} = {beta} {mark}"


def markers_text(row: TraceRow, beta_name: str = "β") -> str:
    fb1 = (
        f"f{beta_name}+1 = {row.fb1[1]} ({row.fb1[0]})"
        if row.fb1[0] is not None
        else f"f{beta_name}+1 = 0 (only {beta_name} values left)"
    )
    return f"f1 = {row.f1[1]} ({row.f1[0]}), f{beta_name} = {row.fb[1]} ({row.fb[0]}), {fb1}"
