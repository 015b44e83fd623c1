"""Record-level assignment (spec 2.6): vectorised, matches the group counts, row order default."""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.balancing.plan import plan_partition
from core.balancing.records import MISSING_LABEL, assign_records, encode_sa, group_counts
from core.errors import InputError
from core.privacy import Noise
from tests.balancing.pp_helpers import FIG9


def fig9_records(seed: int = 3) -> pd.Series:
    values = np.repeat(list(FIG9), list(FIG9.values()))
    return pd.Series(np.random.default_rng(seed).permutation(values), name="sa")


def test_assignment_matches_group_counts_fig9():
    sa = fig9_records()
    enc = encode_sa(sa)
    plan = plan_partition(enc.counts(), F(1, 4), F(2, 3))
    got = assign_records(enc.codes, enc.labels, plan.groups)
    assert group_counts(enc.codes, got, enc.labels, len(plan.groups)) == [
        {v: c for v, c in g.items()} for g in plan.groups
    ]


def test_original_row_order_within_a_value():
    """The first group containing x takes x's first records, in row order."""
    sa = fig9_records()
    enc = encode_sa(sa)
    plan = plan_partition(enc.counts(), F(1, 3), F(2, 3))
    got = assign_records(enc.codes, enc.labels, plan.groups)
    for value in FIG9:
        rows = np.flatnonzero(sa.to_numpy() == value)
        expected = []
        for j, g in enumerate(plan.groups):
            expected += [j] * g.get(value, 0)
        assert got[rows].tolist() == expected


def test_seeded_permutation_option_keeps_counts_and_is_reproducible():
    enc = encode_sa(fig9_records())
    plan = plan_partition(enc.counts(), F(1, 3), F(2, 3))
    a = assign_records(enc.codes, enc.labels, plan.groups, Noise.seeded(5))
    b = assign_records(enc.codes, enc.labels, plan.groups, Noise.seeded(5))
    plain = assign_records(enc.codes, enc.labels, plan.groups)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, plain)
    assert group_counts(enc.codes, a, enc.labels, 5) == group_counts(
        enc.codes, plain, enc.labels, 5
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 20), min_size=2, max_size=8), st.integers(1, 99), st.integers(0, 9))
def test_assignment_matches_counts_random(values, percent, seed):
    labels = [f"v{i}" for i in range(len(values))]
    rec = np.random.default_rng(seed).permutation(np.repeat(labels, values))
    enc = encode_sa(pd.Series(rec, name="sa"))
    plan = plan_partition(enc.counts(), F(percent, 100), (1 + F(percent, 100)) / 2)
    if not plan.groups:
        return
    got = assign_records(enc.codes, enc.labels, plan.groups)
    assert (got >= 0).all()
    assert group_counts(enc.codes, got, enc.labels, len(plan.groups)) == plan.groups


def test_missing_values_need_a_choice():
    sa = pd.Series(["a", None, "b", "a", np.nan, "c"], name="disease")
    with pytest.raises(InputError, match="2 missing value"):
        encode_sa(sa)
    dropped = encode_sa(sa, missing="drop")
    assert dropped.counts() == {"a": 2, "b": 1, "c": 1} and dropped.n_missing == 2
    cat = encode_sa(sa, missing="category")
    assert cat.counts()[MISSING_LABEL] == 2


def test_dropped_records_get_no_group():
    sa = pd.Series(["a", None, "b", "a", "b", "c", "c", "d"], name="sa")
    enc = encode_sa(sa, missing="drop")
    plan = plan_partition(enc.counts(), F(2, 7), F(2, 3))
    got = assign_records(enc.codes, enc.labels, plan.groups)
    assert got[1] == -1 and (np.delete(got, 1) >= 0).all()


def test_numeric_labels_are_strings():
    enc = encode_sa(pd.Series([1, 2, 2, 10, 10, 10], name="sa"))
    assert enc.counts() == {"1": 1, "2": 2, "10": 3}
