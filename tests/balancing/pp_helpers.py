"""Shared test helpers: compact trace rows and group strings for the worked examples."""

from __future__ import annotations

from fractions import Fraction

from core.balancing.phase1 import TraceRow

FIG9 = {
    "x1": 12, "x2": 8, "x3": 6, "x4": 5, "x5": 4,
    "x6": 3, "x7": 1, "x8": 1, "x9": 1, "x10": 1,
}  # fmt: skip
LABELS10 = [f"x{i}" for i in range(1, 11)]


def counts(text: str) -> dict[str, int]:
    """ "a:6 b:5" -> {"a": 6, "b": 5} (order kept)."""
    out = {}
    for item in text.split():
        v, c = item.split(":")
        out[v] = int(c)
    return out


def vector(values: list[int], labels: list[str] = LABELS10) -> dict[str, int]:
    return {v: c for v, c in zip(labels, values, strict=True) if c}


def parse_trio(text: str) -> tuple:
    """ "6 (x3)" -> ("x3", 6); "0" -> (None, 0)."""
    parts = text.split()
    return (parts[1].strip("()"), int(parts[0])) if len(parts) == 2 else (None, int(parts[0]))


def assert_trace(rows: list[TraceRow], expected: list[tuple]) -> None:
    """expected rows: (n0, order, f1, fb, fb1, phi, branch, h, group, after).

    `after` is "n/f1" for the balance check after removal, or "empty".
    """
    assert len(rows) == len(expected)
    for row, (n0, order, f1, fb, fb1, phi, branch, h, group, after) in zip(
        rows, expected, strict=True
    ):
        where = f"iteration {row.j}"
        assert row.n0 == n0, where
        assert list(row.order) == list(counts(order).items()), where
        assert row.f1 == parse_trio(f1), where
        assert row.fb == parse_trio(fb), where
        assert row.fb1 == parse_trio(fb1), where
        assert row.phi == Fraction(phi), where
        assert row.branch == branch, where
        assert row.h == h and row.h_eq22 == h, where
        assert row.group == counts(group), where
        assert list(row.group) == list(counts(group)), where
        if after == "empty":
            assert row.n_after == 0 and row.balanced_after, where
        else:
            n_after, f1_after = (int(x) for x in after.split("/"))
            assert (row.n_after, row.f1_after) == (n_after, f1_after), where
            assert row.balanced_after, where
