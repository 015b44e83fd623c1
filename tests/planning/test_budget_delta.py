"""Issue 28 item 3: a budget plan lays (ε, δ) together — a planned release that does not fit
because δ ran out is named with δ, and the plan's sentence states both."""

from core.planning.budget import parse_item, split_budget
from core.privacy import Cost


def test_a_planned_release_short_of_delta_says_delta():
    items = [parse_item("sql:0.3/1e-5"), parse_item("sql:0.3/1e-5"), parse_item("location:0.5")]
    split = split_budget("city", Cost(3.0, 1e-5), items)
    assert [a.fits for a in split.allocations] == [True, False, True]
    assert [d.value for d in split.allocations[1].short] == ["delta"]
    text = split.describe()
    assert "remaining epsilon 3, delta 1e-05" in text
    assert "leaving epsilon 2.2, delta 0" in text
    assert "sql (delta short) do not fit" in text
    assert split.to_json()["items"][1]["short"] == ["delta"]
