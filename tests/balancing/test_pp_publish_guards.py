"""Publication guards found by the privacy audit: nothing is published when the plan does not
describe the data, or when a retention probability cannot be sampled exactly."""

from __future__ import annotations

from fractions import Fraction as F

import pandas as pd
import pytest

from core.balancing.plan import plan_partition
from core.balancing.publish import publish
from core.balancing.records import encode_sa
from core.errors import InputError
from core.privacy import Noise


def test_publish_refuses_data_whose_counts_differ_from_the_plan():
    # the plan balances a:3 b:3 c:3 d:3 (rho1_i = 1/4, gamma 3); a table with a:6 would put
    # six a's in the one sub-table: real rho1_i = 1/2 and worst posterior 3/4 > rho2 = 1/2
    plan = plan_partition({"a": 3, "b": 3, "c": 3, "d": 3}, F(1, 3), F(1, 2))
    df = pd.DataFrame({"sa": ["a"] * 6 + ["b"] * 2 + ["c"] * 2 + ["d"] * 2})
    with pytest.raises(InputError, match="do not match"):
        publish(df, "sa", plan, Noise.seeded(0))
    with pytest.raises(InputError, match="do not match"):
        publish(df, "sa", plan, Noise.seeded(0), accept_fallback=True)


def test_publish_accepts_the_data_the_plan_was_made_from():
    plan = plan_partition({"a": 3, "b": 3, "c": 3, "d": 3}, F(1, 3), F(1, 2))
    df = pd.DataFrame({"sa": ["d", "c", "b", "a"] * 3})
    assert len(publish(df, "sa", plan, Noise.seeded(0)).table) == 12


def test_retention_beyond_64_bit_denominators_is_an_input_error():
    counts = {f"v{i}": 1000 + 37 * i for i in range(60)}
    plan = plan_partition(counts, F("0.0333333333333333331"), F("0.666666666666666667"))
    assert max(s.p.denominator for s in plan.subtables) >= 2**63  # precondition of this test
    df = pd.DataFrame({"sa": [v for v, c in plan.counts.items() for _ in range(c)]})
    with pytest.raises(InputError, match="64-bit"):
        publish(df, "sa", plan, Noise.seeded(0))


def test_metadata_records_the_missing_value_choice_but_no_original_count():
    sa = ["a", "b", "c", "d"] * 3 + [None] * 3
    df = pd.DataFrame({"sa": sa})
    plan = plan_partition(encode_sa(df["sa"], missing="drop").counts(), F(1, 3), F(1, 2))
    meta = publish(df, "sa", plan, Noise.seeded(0), missing="drop").metadata
    assert meta["missing_values"] == {"policy": "drop"}
