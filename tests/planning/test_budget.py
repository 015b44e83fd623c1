"""Budget plans: the split against the remaining budget, saving (which charges nothing), and
releases read back as "as planned" or "beyond the plan"."""

import pytest

from core.errors import InputError
from core.planning.budget import (
    BudgetItem,
    PlanStatus,
    parse_item,
    plan_status,
    plan_vs_spend,
    split_budget,
)
from core.privacy import Cost
from core.registry import Registry
from tests.planning.conftest import charge


def test_fixed_items_take_what_they_need_in_order():
    items = [parse_item("location:0.5x2:method=ug"), parse_item("sql:1.5"), parse_item("pp:1")]
    split = split_budget("city", Cost(3.0), items)
    fits = [a.fits for a in split.allocations]
    assert fits == [True, True, False]  # 1.0 + 1.5 used; pp's 1 does not fit in 0.5
    assert split.planned.epsilon == pytest.approx(2.5)
    assert split.left.epsilon == pytest.approx(0.5)
    assert split.allocations[0].more_possible == 1  # one more 0.5 release fits in 0.5
    assert "pp (epsilon short) do not fit" in split.describe()


def test_shares_split_what_is_left_by_weight():
    items = [parse_item("pilot:0.05"), parse_item("location:share*3"), parse_item("sql:share")]
    split = split_budget("city", Cost(2.05), items)
    assert split.allocations[1].epsilon_each == pytest.approx(1.5)
    assert split.allocations[2].epsilon_each == pytest.approx(0.5)
    assert split.left.epsilon == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize(
    "text", ["nosuch:1", "sql", "sql:-1", "sql:1x0", "location:1:method", "sql:abc"]
)
def test_bad_items_are_one_line(text):
    with pytest.raises(InputError) as err:
        parse_item(text)
    assert "\n" not in str(err.value)


def test_item_spellings():
    item = parse_item("sql:1.2/1e-5x3:query=q1")
    assert (item.tool, item.epsilon, item.delta, item.repeat) == ("sql", 1.2, 1e-5, 3)
    assert item.match == {"query": "q1"}
    assert BudgetItem.from_json(item.to_json()) == item


def test_saving_a_plan_charges_nothing(registry):
    before = registry.spent("city")
    saved = registry.save_plan("city", "Q3", [parse_item("sql:1").to_json()], 1.0)
    assert registry.spent("city") == before == (0.0, 0.0)
    assert registry.releases("city") == []
    assert [p.id for p in registry.plans("city")] == [saved.id]
    assert registry.plans("city")[0].items[0]["tool"] == "sql"


def test_saving_needs_a_registered_dataset(registry):
    with pytest.raises(InputError):
        registry.save_plan("nosuch", "x", [], 1.0)


def test_releases_as_planned_then_beyond(registry):
    early = charge(registry, "sql", 0.1)
    items = [parse_item("location:0.5x2:method=ug").to_json(), parse_item("sql:1").to_json()]
    registry.save_plan("city", "plan", items, 2.0)
    a = charge(registry, "location", 0.5, method="ug")
    b = charge(registry, "location", 0.4, method="ug")
    c = charge(registry, "location", 0.5, method="ug")  # a third: the plan had two
    d = charge(registry, "location", 0.3, method="privtree")  # another method
    e = charge(registry, "sql", 1.2)  # costs more than planned
    plans, releases = registry.plans("city"), registry.releases("city")
    status = {r.id: plan_status(r, plans, releases) for r in releases}
    assert status[early.id] is PlanStatus.NO_PLAN
    assert status[a.id] is status[b.id] is PlanStatus.AS_PLANNED
    assert status[c.id] is status[d.id] is status[e.id] is PlanStatus.BEYOND_PLAN
    spend = plan_vs_spend(plans[0], plans, releases)
    assert [s.used for s in spend.items] == [2, 0]
    assert spend.items[0].epsilon_spent == pytest.approx(0.9)
    assert set(spend.beyond) == {c.id, d.id, e.id}
    assert spend.beyond_epsilon == pytest.approx(0.5 + 0.3 + 1.2)


def test_a_later_plan_supersedes_the_earlier_one(registry):
    registry.save_plan("city", "first", [parse_item("sql:1").to_json()], 1.0)
    a = charge(registry, "sql", 1.0)
    registry.save_plan("city", "second", [parse_item("pp:1").to_json()], 1.0)
    b = charge(registry, "sql", 1.0)
    plans, releases = registry.plans("city"), registry.releases("city")
    assert plan_status(a, plans, releases) is PlanStatus.AS_PLANNED
    assert plan_status(b, plans, releases) is PlanStatus.BEYOND_PLAN
    first = plan_vs_spend(plans[0], plans, releases)
    assert first.items[0].used == 1 and first.beyond == ()


def test_a_v2_registry_gains_the_plans_table_and_keeps_its_releases(registry, tmp_path):
    import sqlite3

    from core.registry.store import FILE_NAME, MIGRATIONS

    charge(registry, "sql", 0.5)
    registry.close()
    con = sqlite3.connect(tmp_path / "reg" / FILE_NAME)
    con.execute("DROP TABLE plans")
    for table in ("table_schemas", "schema_changes", "restores"):  # v4 (declared schemas)
        con.execute(f"DROP TABLE {table}")
    con.execute("DELETE FROM schema_version WHERE version >= 3")
    con.commit()
    con.close()
    again = Registry(tmp_path / "reg")
    assert len(MIGRATIONS) >= 3
    assert again.spent("city") == (0.5, 0.0)
    assert again.plans("city") == []
    again.save_plan("city", "after upgrade", [parse_item("sql:1").to_json()], 1.0)
    assert again.plans("city")[0].after_release == 1
