"""AppTest of the DP SQL page's bounds helper: the same charged release as `dpx plan bounds`
(tool "bounds"), its cost stated before the click, in analyst mode too; seeded, it proposes
exactly what `core.planning.bounds` proposes from the same values and seed."""

from __future__ import annotations

import pytest

from core.dpsql.demos import DEMOS
from core.planning.bounds import measure_bounds, unit_values
from core.privacy import Accountant, Cost, Noise
from core.registry import Policy, Registry, RunKind
from tests.app.conftest import register_staff
from ui.noise import MODE_KEY, SEED_KEY
from ui.plan.bounds import RESULT

PAGE = "pages/dp_sql.py"
DEMO = "sql-employee-orders"
EPSILON = 0.5


@pytest.fixture
def registry(registry_dir, tmp_path, monkeypatch) -> Registry:
    monkeypatch.delenv("DPX_MODE", raising=False)
    return register_staff(registry_dir, tmp_path, Policy(2.5, 1e-4))


def _open_bounds(at):
    at.session_state["dpsql_bounds_open"] = True
    at.run()
    assert not at.exception, at.exception
    at.selectbox(key="dpsql_bounds_column").set_value("Orders.amount")
    at.number_input(key="dpsql_bounds_eps").set_value(EPSILON).run()  # 98 units: 0.1 is too small
    return at


def test_analyst_bounds_are_a_charged_release_of_the_dataset(app_test, registry, monkeypatch):
    monkeypatch.setenv("DPX_MODE", "analyst")
    at = app_test(PAGE, timeout=120).run()
    at = _open_bounds(at)
    assert any("charges ε 0.5" in m.value and "**staff**" in m.value for m in at.markdown)
    assert registry.releases("staff") == []
    at.button(key="dpsql_bounds_run").click().run()
    assert not at.exception, at.exception
    (release,) = registry.releases("staff")
    assert (release.tool, release.kind, release.epsilon) == ("bounds", RunKind.RELEASE, EPSILON)
    assert release.params["column"] == "amount" and release.params["role"] == "analyst"
    (proposal,) = [s.value for s in at.success if s.value.startswith("Bounds [")]
    assert proposal == release.artefact["describe"]  # the registry's record, nothing else
    assert any(f"release #{release.id} of dataset **staff**" in m.value for m in at.markdown)


def test_seeded_bounds_are_core_s_proposal(app_test, registry_dir):
    at = app_test(PAGE, timeout=120)
    at.session_state[MODE_KEY] = True
    at.session_state[SEED_KEY] = 7
    at = _open_bounds(at.run())
    at.button(key="dpsql_bounds_run").click().run()
    assert not at.exception, at.exception
    shown = at.session_state[RESULT].proposal
    orders = next(d for d in DEMOS if d.name == DEMO).load()["Orders"]
    noise = Noise.seeded(7)
    expected = measure_bounds(
        unit_values(orders, "amount", "uid", "sum"), EPSILON, Accountant(noise, Cost(EPSILON)),
        column="amount",
    )  # fmt: skip
    assert (shown["lower"], shown["upper"]) == (expected.lower, expected.upper)
    assert shown["clipped_share"] == expected.clipped_share
    assert any("demo run" in m.value for m in at.markdown)  # seeded: nothing charged
