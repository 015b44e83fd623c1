"""Parsing and validation of the user's inputs: exact rho values, counts, canonical order.

Everything here is exact: rho is parsed from its text (`Fraction("0.3")`), never from a float,
because `Fraction(0.3)` is 5404319552844595/18014398509481984.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from fractions import Fraction

from core.errors import InputError

_RUNS = re.compile(r"(\d+)")


def parse_rho(text: str | int | Fraction | float, name: str = "rho") -> Fraction:
    """An exact rational from text like "0.3", "1/3" or "30%"; raises InputError if unreadable."""
    if isinstance(text, Fraction):
        value = text
    elif isinstance(text, bool):
        raise InputError(f"{name} must be a number between 0 and 1, got {text!r}.")
    elif isinstance(text, int):
        value = Fraction(text)
    else:
        raw = str(text).strip()  # floats go through their shortest repr: 0.3 -> "0.3"
        percent = raw.endswith("%")
        try:
            value = Fraction(raw[:-1].strip() if percent else raw)
        except (ValueError, ZeroDivisionError):
            raise InputError(
                f"{name} = {raw!r} is not a number. Type a decimal like 0.3 or a fraction like 1/3."
            ) from None
        if percent:
            value /= 100
    return value


def validate_rhos(rho1: Fraction, rho2: Fraction) -> None:
    """0 < rho1 < rho2 < 1, or an InputError saying which bound failed."""
    for name, value in (("rho1", rho1), ("rho2", rho2)):
        if not 0 < value < 1:
            raise InputError(
                f"{name} = {value} is outside (0, 1): it is a probability strictly between 0 and 1 "
                "(e.g. rho1 = 1/3, rho2 = 2/3)."
            )
    if rho1 >= rho2:
        raise InputError(
            f"rho1 = {rho1} must be smaller than rho2 = {rho2}: rho2 is how far an attacker's belief "
            "may rise, so it has to exceed the starting belief rho1. Raise rho2 or lower rho1."
        )


def natural_key(value: object) -> tuple:
    """Natural-sort key: digit runs compare as integers and sort before text at the same position.

    x2 < x10 (plain string order would put x10 first and not reproduce the thesis's figures);
    a remaining tie (e.g. "x01" vs "x1") goes by the raw string.
    """
    label = str(value)
    parts = tuple(
        (0, int(run), "") if run.isdigit() else (1, 0, run) for run in _RUNS.split(label) if run
    )
    return (parts, label)


def canonical_order(counts: Mapping[str, int], given: Iterable[str] | None = None) -> list[str]:
    """The initial order: descending count with natural-sort ties, or exactly `given` if supplied."""
    if given is not None:
        order = list(given)
        if sorted(order, key=str) != sorted(counts, key=str) or len(set(order)) != len(order):
            raise ValueError("the given canonical order must list every value exactly once")
        return order
    return sorted(counts, key=lambda v: (-counts[v], natural_key(v)))


def validate_counts(counts: Mapping[str, int]) -> dict[str, int]:
    """Positive integer counts with at least two distinct values, as a plain dict."""
    if not counts:
        raise InputError("the table is empty: there are no records to balance. Provide data rows.")
    clean: dict[str, int] = {}
    for value, count in counts.items():
        if isinstance(count, bool) or int(count) != count or count <= 0:
            raise InputError(
                f"the count of {value!r} is {count!r}; every count must be a positive whole number."
            )
        clean[str(value)] = int(count)
    if len(clean) < 2:
        only = next(iter(clean))
        raise InputError(
            f"the sensitive attribute has a single distinct value ({only!r}): everybody's value is "
            "known from the table itself and randomization cannot hide it. Pick another column."
        )
    return clean


def parse_freqs(text: str) -> tuple[dict[str, int], list[str]]:
    """`"x1=12,x2=8"` -> ({"x1": 12, "x2": 8}, ["x1", "x2"]) keeping the given order."""
    counts: dict[str, int] = {}
    order: list[str] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        value, sep, count = item.rpartition("=")
        value = value.strip()
        if not sep or not value:
            raise InputError(
                f'--freqs item {item!r} is not VALUE=COUNT. Write e.g. --freqs "x1=12,x2=8".'
            )
        try:
            number = int(count.strip())
        except ValueError:
            raise InputError(
                f"--freqs item {item!r}: the count {count.strip()!r} is not a whole number."
            ) from None
        if value in counts:
            raise InputError(f"--freqs lists the value {value!r} twice; give each value once.")
        counts[value] = number
        order.append(value)
    if not counts:
        raise InputError('--freqs is empty. Write e.g. --freqs "x1=12,x2=8,x3=6".')
    return counts, order
