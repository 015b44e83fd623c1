"""tau, ZetaSQL's ceil(tau) and the engine's discrete threshold T against spec §2.8."""

from __future__ import annotations

import math

import pytest

from core.dpsql.plan.threshold import (
    INT64_MAX,
    INT64_MIN,
    engine_threshold,
    keep_probability,
    single_unit_release_probability,
    tau,
    zetasql_threshold,
)

LN3 = math.log(3)
D24 = 2.0894334e-24


@pytest.mark.parametrize(
    ("eps", "delta", "cu", "expected"),
    [
        (LN3, 1e-8, 1, 18), (LN3, 1e-4, 1, 9), (LN3, 1e-2, 1, 5), (LN3, 0.1, 1, 3),
        (LN3, 0.3, 1, 2), (LN3, D24, 1, 50),
        (LN3, D24, 2, 101), (LN3, D24, 3, 151), (LN3, D24, 10, 512),
        (1, D24, 1, 55), (0.5, D24, 1, 109), (1e-5, D24, 1, 5_383_202),
        (0.001, 0.99999999999, 1, -24_634),
    ],
)  # fmt: skip
def test_zetasql_vectors(eps, delta, cu, expected):
    assert zetasql_threshold(eps, delta, cu) == expected


def test_zetasql_extremes():
    assert zetasql_threshold(1, 0, 1) == INT64_MAX
    assert zetasql_threshold(1, 1, 1) == INT64_MIN


@pytest.mark.parametrize(
    "args",
    [(0, 1e-5, 1), (-1, 1e-5, 1), (math.nan, 1e-5, 1), (math.inf, 1e-5, 1),
     (1, 1e-5, 0), (1, 1e-5, -1), (1, -0.1, 1), (1, 1.01, 1), (1, math.nan, 1)],
)  # fmt: skip
def test_errors(args):
    with pytest.raises(ValueError):
        tau(*args)
    with pytest.raises(ValueError):
        zetasql_threshold(*args)


# spec §2.8 worked table: (eps_tau, delta, C_u, tau, ceil(tau), T, P(single unit released) at T)
WORKED = [
    (1, 1e-5, 1, 11.820, 12, 13, 4.49e-6),
    (1, 1e-5, 3, 36.755, 37, 38, 2.57e-6),
    (1, 1e-5, 5, 63.146, 64, 64, 1.85e-6),
    (1, 1e-6, 1, 14.122, 15, 15, 6.08e-7),
    (1, 1e-6, 3, 43.663, 44, 45, 2.49e-7),
    (0.5, 1e-5, 1, 22.640, 23, 24, 6.31e-6),
    (0.5, 1e-5, 3, 72.510, 73, 73, 3.33e-6),
    (1 / 3, 1e-5, 1, 33.459, 34, 34, 9.73e-6),
    (1 / 3, 1e-5, 3, 108.265, 109, 109, 3.24e-6),
    (LN3, 1e-5, 1, 10.849, 11, 12, 4.23e-6),
    (0.25, 1e-5, 2, 93.103, 94, 94, 4.75e-6),
]


@pytest.mark.parametrize(("eps", "delta", "cu", "t", "ceil_t", "big_t", "p"), WORKED)
def test_worked_table(eps, delta, cu, t, ceil_t, big_t, p):
    assert tau(eps, delta, cu) == pytest.approx(t, abs=5e-4)
    assert zetasql_threshold(eps, delta, cu) == ceil_t
    assert engine_threshold(eps, delta, cu) == big_t
    # the table rounds to 3 significant digits
    assert single_unit_release_probability(big_t, cu / eps) == pytest.approx(p, rel=6e-3)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("delta", [1e-9, 1e-5, 1e-3, 0.1, 0.6])
@pytest.mark.parametrize("cu", [1, 2, 3, 10])
def test_engine_threshold_is_minimal_and_safe(eps, delta, cu):
    big_t = engine_threshold(eps, delta, cu)
    d_adj = -math.expm1(math.log1p(-delta) / cu)
    b = cu / eps
    assert big_t >= zetasql_threshold(eps, delta, cu)
    assert single_unit_release_probability(big_t, b) <= d_adj
    assert single_unit_release_probability(big_t - 1, b) > d_adj


def test_survival_curve_examples():
    # spec §2.8: T = 13, b = 1 and T = 94, b = 8
    got = [round(keep_probability(n, 13, 1.0), 4) for n in (5, 10, 13, 15, 20)]
    assert got == [0.0002, 0.0364, 0.7311, 0.9636, 0.9998]
    got = [round(keep_probability(n, 94, 8.0), 2) for n in (80, 90, 95, 100, 110, 120)]
    assert got == [0.09, 0.32, 0.59, 0.78, 0.94, 0.98]


@pytest.mark.parametrize(("eps", "delta", "cu", "t", "ceil_t", "big_t", "p"), WORKED)
def test_opendp_cross_check_agrees_delta_is_respected(eps, delta, cu, t, ceil_t, big_t, p):
    """OpenDP's make_laplace_threshold with our scale and T reports delta' <= delta."""
    from core.dpsql.plan.threshold import opendp_threshold_delta

    assert opendp_threshold_delta(big_t, cu / eps, cu) <= delta
