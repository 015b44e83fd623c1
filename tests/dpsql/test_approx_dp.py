"""Approximate-DP histogram test (spec §7.8, after Google's verifyApproximateDp): neighbouring
inputs (count 10 vs 11), 100,000 seeded releases each, delta_hat = sum over output bins of
max(0, p - e^eps q) in both directions. The real mechanism passes (delta_hat <= 0.01); a
deliberately broken one with half the noise scale must fail."""

from __future__ import annotations

import copy
import dataclasses
import math

import numpy as np
import pandas as pd

from core.dpsql.catalog import Catalog
from core.dpsql.release.noise import release
from core.dpsql.service import prepare
from core.privacy import Accountant, DiscreteLaplace, Noise

RUNS = 100_000


def plan():
    catalog = Catalog()
    catalog.add_private("t", pd.DataFrame({"uid": [1], "g": [1]}), "uid")
    sql = (
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1) "
        "g, ANON_COUNT(*, 1) AS c FROM t GROUP BY g"
    )
    return prepare(sql, catalog, Noise.seeded(0)).plan


def outputs(p, count: int, seed: int) -> np.ndarray:
    frame = pd.DataFrame(
        {"k0": np.arange(RUNS), "n_units": np.full(RUNS, 10**6), "s0": np.full(RUNS, count)}
    )
    return release(p, frame, Accountant(Noise.seeded(seed))).table["v0"].to_numpy()


def delta_hat(a: np.ndarray, b: np.ndarray, eps: float) -> float:
    bins = np.union1d(np.unique(a), np.unique(b))
    pa = np.array([np.mean(a == v) for v in bins])
    pb = np.array([np.mean(b == v) for v in bins])
    return max(
        np.maximum(0, pa - math.exp(eps) * pb).sum(), np.maximum(0, pb - math.exp(eps) * pa).sum()
    )


def test_count_mechanism_is_approximately_dp_and_a_broken_one_is_caught():
    p = plan()
    eps = float(p.statistics[0].epsilon)  # C_u = 1: the per-partition budget of the count
    assert eps == 0.5
    d, d2 = outputs(p, 10, 1), outputs(p, 11, 2)
    assert delta_hat(d, d2, eps) <= 0.01

    good = p.statistics[0]
    half = DiscreteLaplace(good.mechanism.label, sensitivity=0.5, epsilon=eps)  # half the scale
    count = copy.copy(p.aggregates[0])
    count.statistics = (dataclasses.replace(good, mechanism=half),)
    bad_plan = dataclasses.replace(p, aggregates=[count])
    b, b2 = outputs(bad_plan, 10, 3), outputs(bad_plan, 11, 4)
    assert delta_hat(b, b2, eps) > 0.1
