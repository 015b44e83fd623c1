"""Phase 3 of a release: rows, perturbation through the mechanism family, the published table
and metadata, and the unbiased estimator (spec 6.2-6.4, issue 16)."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest

from core.balancing.assign import Slots, draw_record_subtables, perturb
from core.balancing.estimate import estimate_distribution, subtable_estimate, true_variance
from core.balancing.names import SUBTABLE_COLUMN
from core.balancing.plan import plan_partition
from core.balancing.publish import ROWS_FROM_RECORDS, ROWS_FROM_SLOTS, publish
from core.balancing.release import (
    ReleaseSettings,
    posterior_check,
    publishable_subtables,
    subtable_mechanisms,
)
from core.balancing.synthetic import patient_table
from core.errors import InputError
from core.privacy import Accountant, Noise, PPRandomization, same_mechanism
from tests.balancing.pp_helpers import FIG9, counts

DISEASES = tuple(sorted(patient_table(n=3000, seed=5)["Disease"].unique()))
SETTINGS = ReleaseSettings(F(1, 5), F(1, 2), categories=DISEASES)  # declared: delta 0
FROM_DATA = ReleaseSettings(F(1, 5), F(1, 2))  # values read from the data, kept by threshold


def patients(n: int = 3000) -> pd.DataFrame:
    return patient_table(n=n, seed=5)


def acc(noise: Noise, s: ReleaseSettings = SETTINGS) -> Accountant:
    return Accountant(noise, budget=s.cost, rho=s.claim)


def test_records_publication_structure_and_metadata():
    df = patients()
    a = acc(Noise.seeded(1))
    pub = publish(df, "Disease", ["sex", "age", "Disease"], SETTINGS, a)
    t = pub.table
    assert list(t.columns) == ["sex", "age", "Disease", SUBTABLE_COLUMN] and len(t) == len(df)
    assert "patient_id" not in t.columns  # only what was asked for
    # other attributes pass through unchanged (as a multiset); rows are shuffled
    assert sorted(t["age"]) == sorted(df["age"]) and t["age"].tolist() != df["age"].tolist()
    meta = pub.metadata
    assert meta["rows"] == ROWS_FROM_RECORDS
    assert meta["published_columns"] == ["sex", "age", "Disease", SUBTABLE_COLUMN]
    assert meta["noise"]["mode"] == "seeded" and "seed" not in meta["noise"]
    # every published value lies in its sub-table's domain
    for s in meta["subtables"]:
        rows = t[t[SUBTABLE_COLUMN] == s["id"]]
        assert set(rows["Disease"]) <= set(s["domain"])
        assert s["posterior_bound"] == "1/2" and s["retention"] == s["p"]
    # every record sits in a sub-table whose domain holds its true value (all values planned)
    domains = [set(s["domain"]) for s in meta["subtables"]]
    for true, g in zip(df["Disease"], pub.assignment, strict=True):
        assert true in domains[g]


@pytest.mark.parametrize("settings", [SETTINGS, FROM_DATA], ids=["declared", "from data"])
def test_the_charge_equals_what_drew_the_noise(settings):
    """Issue 16: the metadata lists exactly the accountant's mechanisms; the plan's discrete
    Laplace is the only ε (and, for values read from the data, the threshold that lists them the
    only δ); one PP randomization per sub-table with its retention and posterior."""
    a = acc(Noise.seeded(2), settings)
    pub = publish(patients(), "Disease", ["Disease"], settings, a)
    rows = pub.metadata["privacy"]["mechanisms"]
    assert rows == [m.to_json() for m in a.mechanisms]
    charged = settings.charged_mechanisms
    assert all(same_mechanism(m, c) for m, c in zip(a.mechanisms, charged, strict=False))
    plan_mech, *rest = a.mechanisms
    pp = rest[len(charged) - 1 :]
    assert plan_mech.sensitivity == 2 and plan_mech.scale == 2.0
    assert a.spent == settings.cost and settings.cost.epsilon == 1.0
    assert (settings.cost.delta == 0) == (settings.categories is not None)
    assert all(isinstance(m, PPRandomization) for m in pp)
    assert len(pp) == len(pub.release.subtables) == len(pub.metadata["subtables"])
    for m, s in zip(pp, pub.release.subtables, strict=True):
        assert (m.retention, m.domain_size, m.rho1) == (s.p, s.m, s.rho1)
        assert m.posterior_bound == F(1, 2)


def test_sa_only_publication_is_the_plan_slots():
    """With the SA alone no record is read: rows per sub-table are the planned sizes."""
    df = patients()
    pub = publish(df, "Disease", ["Disease"], SETTINGS, acc(Noise.seeded(3)))
    t = pub.table
    assert list(t.columns) == ["Disease", SUBTABLE_COLUMN]
    assert pub.metadata["rows"] == ROWS_FROM_SLOTS and pub.assignment is None
    sizes = t[SUBTABLE_COLUMN].value_counts().sort_index().tolist()
    assert sizes == [s["size"] for s in pub.metadata["subtables"]]
    plan_counts = pub.metadata["plan_counts"]
    assert sum(sizes) == sum(plan_counts.values())
    # the rows depend on the counts only: another table with the same counts (rows shuffled,
    # other columns changed) gives the identical publication with the same seed
    other = df.sample(frac=1.0, random_state=1).assign(age=0).reset_index(drop=True)
    pub2 = publish(other, "Disease", ["Disease"], SETTINGS, acc(Noise.seeded(3)))
    assert pub2.table.equals(t) and pub2.metadata == pub.metadata


def test_record_subtable_draw_follows_the_plan_shares():
    """P(sub-table i | value x) = s_i(x) / c~(x); values without a slot follow n~_i / n~."""
    plan = plan_partition(FIG9, F(1, 3), F(2, 3))  # E6: x1 in g1 (6), g2 (4), g3 (2)
    slots = Slots.of(plan.subtables)
    a = acc(Noise.seeded(4), ReleaseSettings(F(1, 3), F(2, 3)))
    mech = subtable_mechanisms(plan.subtables, F(2, 3))[0]
    n = 60_000
    x1 = slots.values.index("x1")
    group, local = draw_record_subtables(np.full(n, x1), slots, a, mech)
    freq = np.bincount(group, minlength=5) / n
    assert np.allclose(freq, [6 / 12, 4 / 12, 2 / 12, 0, 0], atol=0.008)  # > 5 SE
    assert {plan.subtables[g].domain[k] for g, k in zip(group[:500], local[:500], strict=True)} == {
        "x1"
    }
    group, _ = draw_record_subtables(np.full(n, -1), slots, a, mech)
    sizes = np.array([s.size for s in plan.subtables]) / 42
    assert np.allclose(np.bincount(group, minlength=5) / n, sizes, atol=0.008)


def test_perturbation_probabilities_exact_in_distribution():
    """P(y = x) = p + q and P(y = x') = q, drawn through the sub-table's PPRandomization."""
    plan = plan_partition(counts("a:4 b:3 c:3 d:3 e:1"), F(1, 3), F(2, 3))
    g4 = plan.subtables[3]  # m = 5, p = 7/12, q = 1/12
    slots = Slots.of([g4])
    mechs = subtable_mechanisms([g4], F(2, 3))
    n = 120_000
    a = acc(Noise.seeded(11), ReleaseSettings(F(1, 3), F(2, 3)))
    out = perturb(a, mechs, slots, np.zeros(n, np.int64), np.zeros(n, np.int64))
    labels = list(g4.counts)
    freq = np.array([(out == v).mean() for v in labels])
    expected = [float(g4.p + g4.q)] + [float(g4.q)] * 4
    # 5 standard errors of a proportion at n = 120,000 is < 0.0072
    assert np.allclose(freq, expected, atol=0.0072)
    assert a.mechanisms == mechs


def test_refused_noisy_plan_publishes_nothing_without_consent():
    sa = ["a"] * 600 + ["b"] * 500 + ["c"] * 100 + ["d"] * 100
    df = pd.DataFrame({"sa": sa})
    s = ReleaseSettings(F(2, 5), F(1, 2), plan_epsilon=5.0)
    with pytest.raises(InputError, match="Nothing was published"):
        publish(df, "sa", ["sa"], s, acc(Noise.seeded(1), s))
    fallback = ReleaseSettings(F(2, 5), F(1, 2), plan_epsilon=5.0, accept_fallback=True)
    pub = publish(df, "sa", ["sa"], fallback, acc(Noise.seeded(1), fallback))
    assert pub.metadata["single_table_fallback"] is True
    assert set(pub.table[SUBTABLE_COLUMN]) == {1}


def test_declared_categories_cover_the_value_list():
    """Declared categories: a value outside them gets no slot (its records take a random slot),
    and the metadata says where the list came from."""
    df = patients()
    cats = tuple(v for v in df["Disease"].unique() if v != "Lupus")
    s = ReleaseSettings(F(1, 5), F(1, 2), categories=cats)
    pub = publish(df, "Disease", ["sex", "Disease"], s, acc(Noise.seeded(5), s))
    assert pub.metadata["categories"] == {"source": "declared", "values": list(cats),
                                          "threshold": None}  # fmt: skip
    assert "Lupus" not in pub.metadata["plan_counts"] and len(pub.table) == len(df)
    assert "Lupus" not in set(pub.table["Disease"])


def test_values_read_from_the_data_are_listed_only_above_the_threshold():
    """Without declared categories a value is listed only when its noisy count reaches tau:
    a value held by a few records is not revealed (its records take random slots)."""
    df = patients()
    df.loc[:2, "Disease"] = "SENTINEL-VALUE"  # three records hold a unique value
    tau = FROM_DATA.selection_mechanism.threshold
    assert tau == 28 and FROM_DATA.selection_mechanism.delta <= 1e-6
    for seed in range(30):
        pub = publish(
            df, "Disease", ["sex", "Disease"], FROM_DATA, acc(Noise.seeded(seed), FROM_DATA)
        )
        assert pub.metadata["categories"]["source"] == "data"
        assert pub.metadata["categories"]["threshold"] == tau
        assert all(c >= tau for c in pub.metadata["plan_counts"].values())
        assert "SENTINEL-VALUE" not in pub.csv() and "SENTINEL-VALUE" not in str(pub.metadata)
        assert len(pub.table) == len(df)  # its records are published, with a plan value


def test_estimator_formula_on_a_known_case():
    est = subtable_estimate({"a": 10, "b": 2}, 12, F(1, 2), F(1, 6), ["a", "b", "c"])
    assert est["a"][0] == (10 - 2) / F(1, 2) == 16
    assert est["c"][0] == -4
    # variance plugs in the estimate clipped to [0, |S|]
    assert est["a"][1] == true_variance(12, 12, F(1, 2), F(1, 6))
    assert est["c"][1] == true_variance(0, 12, F(1, 2), F(1, 6))


def test_estimator_unbiased_on_published_records_monte_carlo():
    """Declared columns: the records themselves are published, so the estimates average to the
    TRUE counts (within 4.5 standard errors over seeded repetitions), though the plan is noisy."""
    df = patients(2000)
    true = df["Disease"].value_counts().to_dict()
    assert set(true) <= set(DISEASES)  # every value declared: each has its slots
    noise = Noise.seeded(2024)
    reps = 200
    samples = {v: [] for v in true}
    for _ in range(reps):
        pub = publish(df, "Disease", ["sex", "Disease"], SETTINGS, acc(noise))
        est = {e.value: float(e.estimate) for e in estimate_distribution(
            pub.table, "Disease", SUBTABLE_COLUMN, pub.metadata["subtables"])}  # fmt: skip
        for v in true:
            samples[v].append(est.get(v, 0.0))
    for v, c in true.items():
        x = np.asarray(samples[v])
        assert abs(x.mean() - c) <= 4.5 * x.std(ddof=1) / np.sqrt(reps) + 1e-9, v


def test_secure_mode_publish_runs():
    pub = publish(patients(500), "Disease", ["Disease"], SETTINGS, acc(Noise.secure()))
    assert pub.metadata["noise"] == {"mode": "secure"} and not pub.seeded
    assert SUBTABLE_COLUMN in pub.csv().splitlines()[0]


def test_seeded_csv_header_says_seeded():
    pub = publish(patients(500), "Disease", ["Disease"], SETTINGS, acc(Noise.seeded(1)))
    assert pub.csv().splitlines()[0].startswith("SEEDED-demo-not-private,")


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
        publishable_subtables(plan, False)
    # and the mechanism object itself refuses such a retention
    with pytest.raises(ValueError, match="exceeds rho2"):
        PPRandomization("g1", rho1=F(1, 3), rho2=F(2, 3), retention=p, domain_size=3)


def test_posterior_check_passes_per_subtable_gamma():
    plan = plan_partition(FIG9, F(3, 10), F(2, 3))
    assert posterior_check(plan.subtables, plan.rho2) == []


def test_random_count_queries_report():
    from core.balancing.estimate import random_count_queries

    df = patients()
    pub = publish(df, "Disease", ["sex", "insurance", "Disease"], SETTINGS, acc(Noise.seeded(3)))
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
