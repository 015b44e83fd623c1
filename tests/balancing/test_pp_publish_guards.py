"""Publication guards found by the privacy audits: nothing is published when a retention
probability cannot be sampled exactly, the missing-value choice is recorded without a count, and
bad settings are one-line input errors."""

from __future__ import annotations

from fractions import Fraction as F

import pandas as pd
import pytest

from core.balancing.plan import plan_partition
from core.balancing.publish import publish
from core.balancing.release import ReleaseSettings, publishable_subtables
from core.errors import InputError
from core.privacy import Accountant, Noise


def test_retention_beyond_64_bit_denominators_is_an_input_error():
    counts = {f"v{i}": 1000 + 37 * i for i in range(60)}
    plan = plan_partition(counts, F("0.0333333333333333331"), F("0.666666666666666667"))
    assert max(s.p.denominator for s in plan.subtables) >= 2**63  # precondition of this test
    with pytest.raises(InputError, match="64-bit"):
        publishable_subtables(plan, False)


def test_metadata_records_the_missing_value_choice_but_no_original_count():
    sa = ["a", "b", "c", "d"] * 300 + [None] * 3
    df = pd.DataFrame({"sa": sa})
    s = ReleaseSettings(F(1, 3), F(1, 2), missing="drop")
    meta = publish(df, "sa", ["sa"], s, Accountant(Noise.seeded(0), s.cost, s.claim)).metadata
    assert meta["missing_values"] == {"policy": "drop", "label": "(missing)"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"plan_epsilon": 0}, "must be > 0"),
        ({"plan_epsilon": float("nan")}, "must be a number"),
        ({"tie_policy": "x"}, "tie policy"),
        ({"merge_policy": "x"}, "merge policy"),
        ({"missing": "x"}, "missing-value policy"),
        ({"categories": ("a",)}, "at least two"),
        ({"categories": ("a", "a", "b")}, "each once"),
    ],
)
def test_bad_settings_are_input_errors(kwargs, message):
    with pytest.raises(InputError, match=message):
        ReleaseSettings(F(1, 3), F(1, 2), **kwargs)


def test_a_noisy_plan_with_fewer_than_two_values_is_refused():
    df = pd.DataFrame({"sa": ["a"] * 3 + ["b"] * 3})
    s = ReleaseSettings(F(1, 2), F(3, 4), plan_epsilon=0.01)
    outcomes = set()
    for seed in range(20):
        try:
            publish(df, "sa", ["sa"], s, Accountant(Noise.seeded(seed), s.cost, s.claim))
            outcomes.add("published")
        except InputError as err:
            outcomes.add(str(err).split(":")[0])
            assert "\n" not in str(err)
    assert outcomes  # every run either publishes or says why in one line
