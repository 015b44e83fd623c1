"""Phase 3 perturbation, publication and the unbiased estimator (spec 6.2-6.4)."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest

from core.balancing.estimate import estimate_distribution, subtable_estimate, true_variance
from core.balancing.plan import plan_partition
from core.balancing.publish import SUBTABLE_COLUMN, perturb_codes, posterior_check, publish
from core.errors import InputError
from core.privacy import Noise
from tests.balancing.pp_helpers import FIG9, counts


def fig9_frame() -> pd.DataFrame:
    values = np.repeat(list(FIG9), list(FIG9.values()))
    return pd.DataFrame({"name": [f"p{i}" for i in range(42)], "age": np.arange(42), "sa": values})


def test_publish_structure_and_metadata():
    df = fig9_frame()
    plan = plan_partition(FIG9, F(1, 3), F(2, 3))
    pub = publish(df, "sa", plan, Noise.seeded(1), drop_columns=["name"])
    t = pub.table
    assert list(t.columns) == ["age", "sa", SUBTABLE_COLUMN] and len(t) == 42
    assert sorted(t[SUBTABLE_COLUMN].value_counts().sort_index().tolist()) == [3, 3, 6, 12, 18]
    # other attributes pass through unchanged (as a multiset); rows are shuffled
    assert sorted(t["age"]) == list(range(42)) and t["age"].tolist() != list(range(42))
    meta = pub.metadata
    assert meta["noise"]["mode"] == "seeded" and "not for real releases" in meta["noise"]["warning"]
    assert "seed" not in meta["noise"]  # a seed would undo the randomization
    assert [m["p"] for m in meta["subtables"]] == ["1/2"] * 5
    assert meta["subtables"][0]["domain"] == ["x1", "x2", "x3"]
    # every published value lies in its sub-table's domain
    for m in meta["subtables"]:
        assert set(t.loc[t[SUBTABLE_COLUMN] == m["id"], "sa"]) <= set(m["domain"])


def test_publish_refused_plan_publishes_nothing_without_consent():
    df = pd.DataFrame({"sa": list("aaaaaabbbbbcd")})
    plan = plan_partition(counts("a:6 b:5 c:1 d:1"), F(2, 5), F(2, 3))
    with pytest.raises(InputError, match="Nothing was published"):
        publish(df, "sa", plan, Noise.seeded(1))
    pub = publish(df, "sa", plan, Noise.seeded(1), accept_fallback=True)
    assert pub.metadata["single_table_fallback"] is True
    assert pub.metadata["subtables"][0]["p"] == "11/31"
    assert set(pub.table[SUBTABLE_COLUMN]) == {1}


def test_perturbation_probabilities_exact_in_distribution():
    """P(y = x) = p + q and P(y = x') = q, checked on many draws with a fixed seed."""
    plan = plan_partition(counts("a:4 b:3 c:3 d:3 e:1"), F(1, 3), F(2, 3))
    g4 = plan.subtables[3]  # m = 5, p = 7/12, q = 1/12
    labels = list(g4.counts)
    n = 120_000
    codes = np.zeros(n, dtype=np.int64)  # every record has value labels[0]
    out = perturb_codes(codes, np.zeros(n, dtype=np.int64), [g4], labels, Noise.seeded(11))
    freq = np.bincount(out, minlength=5) / n
    expected = [float(g4.p + g4.q)] + [float(g4.q)] * 4
    # 5 standard errors of a proportion at n = 120,000 is < 0.0072
    assert np.allclose(freq, expected, atol=0.0072)


def test_inadmissible_subtable_is_never_perturbed():
    plan = plan_partition(counts("a:6 b:5 c:1 d:1"), F(2, 5), F(2, 3))
    bad = plan.subtables[1]
    with pytest.raises(ValueError, match="inadmissible"):
        perturb_codes(np.zeros(1, np.int64), np.zeros(1, np.int64), [bad], ["c"], Noise.seeded(0))


def test_estimator_formula_on_a_known_case():
    est = subtable_estimate({"a": 10, "b": 2}, 12, F(1, 2), F(1, 6), ["a", "b", "c"])
    assert est["a"][0] == (10 - 2) / F(1, 2) == 16
    assert est["c"][0] == -4
    # variance plugs in the estimate clipped to [0, |S|]
    assert est["a"][1] == true_variance(12, 12, F(1, 2), F(1, 6))
    assert est["c"][1] == true_variance(0, 12, F(1, 2), F(1, 6))


def test_estimator_unbiased_monte_carlo():
    """Mean of the estimates over seeded repetitions is within 4.5 standard errors of the truth."""
    df = fig9_frame()
    plan = plan_partition(FIG9, F(1, 4), F(2, 3))
    noise = Noise.seeded(2024)
    reps = 600
    sums = {v: 0.0 for v in FIG9}
    meta = None
    for _ in range(reps):
        pub = publish(df, "sa", plan, noise)
        meta = pub.metadata["subtables"]
        for e in estimate_distribution(pub.table, "sa", SUBTABLE_COLUMN, meta):
            sums[e.value] += float(e.estimate)
    for v, true in FIG9.items():
        var = sum(
            true_variance(s.counts.get(v, 0), s.size, s.p, s.q)
            for s in plan.subtables
            if v in s.counts
        )
        se = float(var / reps) ** 0.5
        assert abs(sums[v] / reps - true) <= 4.5 * se, v


def test_secure_mode_publish_runs():
    df = fig9_frame()
    plan = plan_partition(FIG9, F(1, 3), F(2, 3))
    pub = publish(df, "sa", plan, Noise.secure())
    assert pub.metadata["noise"] == {"mode": "secure"} and len(pub.table) == 42


def test_publish_rejects_global_gamma_retention():
    """T8: a plan carrying p from the global gamma = 14/3 must fail the section 6.3 check."""
    from dataclasses import replace

    from core.balancing.subtables import gamma_for, retention

    plan = plan_partition(FIG9, F(3, 10), F(2, 3))
    p, q = retention(gamma_for(F(3, 10), F(2, 3)), 3)
    assert (p, q) == (F(11, 20), F(3, 20))
    plan.subtables = [replace(s, p=p, q=q) for s in plan.subtables]
    assert posterior_check(plan.subtables, plan.rho2)[0].endswith("7/10 > rho2 = 2/3")
    with pytest.raises(InputError, match="refusing to publish"):
        publish(fig9_frame(), "sa", plan, Noise.seeded(0))


def test_posterior_check_passes_per_subtable_gamma():
    plan = plan_partition(FIG9, F(3, 10), F(2, 3))
    assert posterior_check(plan.subtables, plan.rho2) == []


def test_random_count_queries_report():
    from core.balancing.estimate import random_count_queries
    from core.balancing.synthetic import patient_table

    df = patient_table(n=3000, seed=5)
    from core.balancing.records import encode_sa

    plan = plan_partition(encode_sa(df["Disease"]).counts(), F(1, 5), F(1, 2))
    pub = publish(df, "Disease", plan, Noise.seeded(3), drop_columns=["patient_id"])
    report = random_count_queries(
        df, pub.table, "Disease", SUBTABLE_COLUMN, pub.metadata["subtables"],
        ["sex", "insurance"], Noise.seeded(4), n_queries=40,
    )  # fmt: skip
    assert len(report) == 40
    assert (report["half_width_95"] > 0).all()
    # true counts are recomputed from the raw table for each predicate
    first = report.iloc[0]
    x, rest = first["query"].split(" = ", 1)[1].split(" AND ")
    col, level = rest.split(" = ")
    mask = (df["Disease"] == x) & (df[col].astype(str) == level)
    assert first["true"] == int(mask.sum())
    # nominal 95% intervals: with 40 queries, far fewer than half can miss
    assert report["covered"].mean() > 0.5
