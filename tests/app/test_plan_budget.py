"""AppTest of the Releases page's budget plan: the draft is `split_budget`'s, saving (owner
only, as the CLI) records the plan and charges nothing, and each release then shows its
`plan_status`; an analyst drafts but cannot save."""

from __future__ import annotations

from core.planning.budget import parse_item, plan_status, plan_vs_spend, split_budget
from core.privacy import Cost
from core.registry import Mechanism, Policy, Registry
from ui.glossary import in_app

PAGE = "pages/releases.py"
ITEMS = "sql:1x2\npp:share"


def _registry(registry_dir, tmp_path) -> Registry:
    table = tmp_path / "t.csv"
    table.write_text("uid,x\n1,2\n")
    reg = Registry(registry_dir)
    reg.add_dataset("sales", [("t", table)], Policy(4.0, 1e-5))
    rel = reg.charge("sql", "sales", {"p": 0}, [Mechanism("laplace", 0.5)], "secure")
    reg.attach(rel.id, {"columns": [], "rows": [], "ci95": {}, "leaves": [], "grid": {}})
    return reg


def _charge(reg: Registry, eps: float) -> int:
    rel = reg.charge("sql", "sales", {"p": 1}, [Mechanism("laplace", eps)], "secure")
    reg.attach(rel.id, {"columns": [], "rows": [], "ci95": {}, "leaves": [], "grid": {}})
    return rel.id


def _frame(at, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def _draft(at):
    at.session_state["rel_plan_sales_open"] = True
    at.run()
    at.text_area(key="rel_plan_sales_items").set_value(ITEMS).run()
    assert not at.exception, at.exception


def test_owner_drafts_saves_and_sees_plan_against_spend(app_test, registry_dir, tmp_path,
                                                        monkeypatch):  # fmt: skip
    monkeypatch.delenv("DPX_MODE", raising=False)
    reg = _registry(registry_dir, tmp_path)
    at = app_test(PAGE)
    _draft(at)
    expected = split_budget("sales", Cost(3.5, 1e-5), [parse_item(i) for i in ITEMS.split()])
    table = _frame(at, "planned release")
    assert list(table["ε in all"]) == [a.epsilon_total for a in expected.allocations]
    assert any(m.value == in_app(expected.describe()) for m in at.markdown)
    at.text_input(key="rel_plan_sales_name").set_value("Q3").run()
    at.button(key="rel_plan_sales_save").click().run()
    assert not at.exception, at.exception
    (saved,) = reg.plans("sales")
    assert saved.name == "Q3" and saved.epsilon == expected.planned.epsilon
    assert reg.spent("sales")[0] == 0.5  # saving charged nothing
    ids = [_charge(reg, 1.0) for _ in range(3)]
    at.run()
    releases = reg.releases("sales")
    want = {r.id: plan_status(r, [saved], releases).value for r in releases}
    assert [want[i] for i in ids] == ["as planned", "as planned", "beyond the plan"]
    listed = _frame(at, "plan")
    assert dict(zip(listed["id"], listed["plan"], strict=True)) == want
    spend = plan_vs_spend(saved, [saved], releases)
    assert any(m.value == f"**{in_app(spend.describe())}**" for m in at.markdown)


def test_analyst_drafts_but_cannot_save(app_test, registry_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("DPX_MODE", "analyst")
    reg = _registry(registry_dir, tmp_path)
    at = app_test(PAGE)
    _draft(at)
    assert _frame(at, "planned release") is not None
    assert not [b for b in at.button if b.key == "rel_plan_sales_save"]
    assert any("Only the data owner saves" in c.value for c in at.caption)
    assert reg.plans("sales") == []
