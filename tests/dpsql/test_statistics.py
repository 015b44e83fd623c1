"""Seeded Monte-Carlo checks of the release step: single-unit release probability, noise scale
and 95% interval coverage. Tolerances are >= 5 binomial/sampling standard deviations."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from core.dpsql.catalog import Catalog
from core.dpsql.plan.threshold import delta_per_partition, single_unit_release_probability
from core.dpsql.release.noise import release
from core.dpsql.service import prepare
from core.privacy import Accountant, Noise


def plan_for(sql: str):
    catalog = Catalog()
    catalog.add_private("t", pd.DataFrame({"uid": [1], "g": [1], "x": [1.0]}), "uid")
    return prepare(sql, catalog, Noise.seeded(0)).plan


def cross_frame(n: int, units: int, **cols) -> pd.DataFrame:
    frame = pd.DataFrame({"k0": np.arange(n), "n_units": np.full(n, units, dtype=np.int64)})
    for name, value in cols.items():
        frame[name] = value
    return frame


@pytest.mark.parametrize("cu", [1, 3])
def test_single_unit_partition_release_rate(cu):
    """200,000 one-unit partitions at eps_tau = 1, delta = 1e-3: the release rate matches the
    exact p(T) <= delta_adj ~ delta/C_u, and a unit's C_u partitions show with prob <= delta."""
    delta, trials = 1e-3, 200_000
    plan = plan_for(
        f"SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = {delta}, "
        f"max_groups_contributed = {cu}) g, COUNT(DISTINCT uid) AS n FROM t GROUP BY g"
    )
    assert float(plan.selection_epsilon) == 1.0  # COUNT(DISTINCT uid) is reused: eps/n
    out = release(plan, cross_frame(trials, 1), Accountant(Noise.seeded(100 + cu)))
    p = single_unit_release_probability(out.threshold.integer, cu / 1.0)
    d_adj = delta_per_partition(delta, cu)
    assert p <= d_adj
    assert 1 - (1 - p) ** cu <= delta
    sd = math.sqrt(trials * p * (1 - p))
    assert abs(out.partitions_released - trials * p) <= 5 * sd
    assert out.partitions_released <= trials * d_adj + 5 * sd


@pytest.mark.parametrize(("upper", "scale"), [(1, 2.0), (4, 8.0), (400, 800.0)])
def test_noise_scale_statistics(upper, scale):
    """ANON_COUNT(*, U) at eps = 1 with C_u = 1 and the unit count: eps_i = 1/2, so b = 2U.
    Mean 0 and variance 2q/(1-q)^2 (discrete Laplace) within 5 standard errors."""
    n = 20_000
    plan = plan_for(
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1) "
        f"g, ANON_COUNT(*, {upper}) AS c FROM t GROUP BY g"
    )
    mech = plan.statistics[0]
    assert mech.scale == pytest.approx(scale)
    true = 10**6
    out = release(plan, cross_frame(n, 10**6, s0=true), Accountant(Noise.seeded(upper)))
    z = out.table["v0"].to_numpy() - true
    q = math.exp(-1 / scale)
    var = 2 * q / (1 - q) ** 2
    assert abs(z.mean()) <= 5 * math.sqrt(var / n)
    # Var of the sample variance: (kurtosis - 1) var^2 / n with kurtosis <= 6 for Laplace
    assert abs(z.var() - var) <= 5 * math.sqrt(5 * var**2 / n)
    assert np.all(z == np.round(z))  # integer noise on integer counts


@pytest.mark.parametrize("upper", [10, 50, 400])
def test_count_interval_coverage(upper):
    """20,000 releases at b = 20, 100, 800: the 95% interval covers 94-96% of the time."""
    n = 20_000
    plan = plan_for(
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 2, delta = 1e-5, max_groups_contributed = 2) "
        f"g, ANON_COUNT(*, {upper}) AS c FROM t GROUP BY g"
    )
    assert plan.statistics[0].scale == pytest.approx(2 * upper)
    true = 10**7
    out = release(plan, cross_frame(n, 10**6, s0=true), Accountant(Noise.seeded(upper + 1)))
    lo, hi = out.intervals[0][:, 0], out.intervals[0][:, 1]
    coverage = np.mean((lo <= true) & (true <= hi))
    assert 0.94 <= coverage <= 0.96


def test_average_interval_is_conservative():
    """The AVG interval (union bound over count and sum boxes) covers at least 95%."""
    n = 20_000
    plan = plan_for(
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1) "
        "g, ANON_AVG(x, 0, 10) AS a FROM t GROUP BY g"
    )
    j = plan.statistics[1].exponent
    units, mean = 200, 3.0
    s = int(round(units * (mean - 5.0) * 2**j))
    out = release(plan, cross_frame(n, 10**6, n0=units, s0=s), Accountant(Noise.seeded(9)))
    lo, hi = out.intervals[0][:, 0], out.intervals[0][:, 1]
    assert np.mean((lo <= mean) & (mean <= hi)) >= 0.95
    assert np.all((out.table["v0"] >= 0) & (out.table["v0"] <= 10))


def test_pre_threshold_min_units():
    """min_privacy_units_per_group = m: partitions with fewer than m units are never released;
    others pass iff noisy count - (m - 1) >= T."""
    plan = plan_for(
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1e6, delta = 0.5, max_groups_contributed = 1, "
        "min_privacy_units_per_group = 5) g, COUNT(DISTINCT uid) AS n FROM t GROUP BY g"
    )
    frame = pd.DataFrame({"k0": np.arange(8), "n_units": np.arange(1, 9, dtype=np.int64)})
    out = release(plan, frame, Accountant(Noise.seeded(1)))
    t = out.threshold.integer
    expected = [n for n in range(1, 9) if n >= 5 and n - 4 >= t]
    assert out.table["v0"].tolist() == expected
    assert min(expected) >= 5
