"""One sentence per release: where it stands against its dataset's budget plan (the same words
in the CLI's registry line and on the pages)."""

from core.planning.budget import PlanStatus, parse_item
from core.planning.standing import standing
from core.privacy import Cost
from core.registry import Claim
from tests.planning.conftest import charge


def test_no_plan_then_as_planned_then_beyond(registry):
    before = standing(registry, charge(registry, "sql", 0.1))
    assert before.status is PlanStatus.NO_PLAN and before.plan_id is None
    assert before.sentence == "No budget plan saved for this dataset."
    items = [parse_item("location:0.5x2:method=ug").to_json()]
    plan = registry.save_plan("city", "autumn", items, 1.0)
    first = standing(registry, charge(registry, "location", 0.5, method="ug"))
    second = standing(registry, charge(registry, "location", 0.4, method="ug"))
    third = standing(registry, charge(registry, "location", 0.5, method="ug"))
    for s in (first, second):
        assert s.status is PlanStatus.AS_PLANNED and s.plan_id == plan.id
        assert s.item == "location (method=ug) x2"
        assert (
            s.sentence
            == f"As planned: item 'location (method=ug) x2' of budget plan #{plan.id} (autumn)."
        )
    assert third.status is PlanStatus.BEYOND_PLAN and third.item is None
    assert third.sentence.startswith(f"Beyond the plan: no item of budget plan #{plan.id} (autumn)")
    assert third.to_json() == {"status": "beyond the plan", "plan_id": plan.id, "item": None}


def test_a_release_keeps_its_standing_when_read_again_later(registry):
    """Read back after later releases used up the item, a planned release is still planned."""
    registry.save_plan("city", "q3", [parse_item("sql:1").to_json()], 1.0)
    planned = charge(registry, "sql", 1.0)
    charge(registry, "sql", 1.0)  # beyond: the one planned sql release is taken
    again = standing(registry, registry.release(planned.id))
    assert again.status is PlanStatus.AS_PLANNED
    assert again.sentence == f"As planned: item 'sql' of budget plan #{again.plan_id} (q3)."


def test_demo_runs_stand_nowhere(registry):
    demo = registry.charge("sql", None, {}, Cost(1.0, 0.0), "seeded", Claim("one point"))
    assert standing(registry, demo).status is PlanStatus.NOT_CHARGED
    assert standing(registry, demo).sentence == ""
