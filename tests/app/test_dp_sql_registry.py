"""AppTest of the DP SQL page on the release registry: a registered dataset's budget is the
registry's (a reload — a new AppTest — shows the same spend), its caps and total refuse before
any data is read, seeded noise is refused on non-teaching data, unregistered data is recorded
but not limited, and analyst mode offers registered datasets only, without previews."""

from __future__ import annotations

import pytest

from core.registry import Policy, Registry, RunKind
from tests.app.conftest import register_staff
from ui.noise import MODE_KEY, SEED_KEY

PAGE = "pages/dp_sql.py"
DEMO = "sql-employee-orders"


@pytest.fixture
def registry(registry_dir, tmp_path, monkeypatch) -> Registry:
    """A registry with dataset 'staff' (the employee/orders demo tables written as CSV files):
    total ε 2.5, δ 1e-4, per-query ε cap 1.2."""
    monkeypatch.delenv("DPX_MODE", raising=False)
    return register_staff(registry_dir, tmp_path, Policy(2.5, 1e-4, 1.2))


def _open_registered(app_test):
    at = app_test(PAGE).run()
    at.radio(key="dpsql_source").set_value("Registered dataset").run()
    assert not at.exception, at.exception
    return at


def _errors(at) -> list[str]:
    """Error messages, without the Teaching tab's standing NON-PRIVATE label."""
    return [e.value for e in at.error if "NON-PRIVATE" not in e.value]


def _spent_line(at) -> str:
    return next(m.value for m in at.markdown if "spent ε =" in m.value)


def test_registered_spend_survives_a_reload(app_test, registry):
    at = _open_registered(app_test)
    assert "spent ε = 0 of 2.5" in _spent_line(at)
    at.button(key="dpsql_run").click().run()
    assert not at.exception and not _errors(at), _errors(at)
    eps, delta = registry.spent("staff")
    assert eps == pytest.approx(1.0) and delta == pytest.approx(1e-5)  # the example's ε, δ
    (release,) = registry.releases("staff")
    assert release.kind is RunKind.RELEASE and release.tool == "sql"
    assert release.artefact["tool"] == "sql" and "rows" in release.artefact  # the typed record
    assert "spent ε = 1 of 2.5" in _spent_line(at)

    reloaded = _open_registered(app_test)  # a new session: nothing kept in session state
    assert "spent ε = 1 of 2.5" in _spent_line(reloaded)
    assert not any(b.key == "dpsql_reset" for b in reloaded.button)
    assert not any(n.key == "dpsql_total_eps" for n in reloaded.number_input)


def test_registered_budget_and_cap_refuse_uncharged(app_test, registry):
    at = _open_registered(app_test)
    at.button(key="dpsql_run").click().run()
    at.button(key="dpsql_run").click().run()
    assert registry.spent("staff")[0] == pytest.approx(2.0)
    at.button(key="dpsql_run").click().run()  # 2 + 1 > 2.5: refused, nothing charged
    assert any("Refused" in e and "exceeded" in e for e in _errors(at))
    assert registry.spent("staff")[0] == pytest.approx(2.0)
    assert "Partitions released" not in {m.label for m in at.metric}

    query = at.text_area(key="dpsql_query").value
    assert "epsilon=1" in query.replace(" ", "").lower()
    at.text_area(key="dpsql_query").set_value(
        query.replace("epsilon = 1", "epsilon = 1.5").replace("epsilon=1", "epsilon=1.5")
    ).run()
    at.button(key="dpsql_run").click().run()  # ε 1.5 above the per-query cap 1.2
    assert any("max_epsilon_per_query = 1.2" in e for e in _errors(at)), _errors(at)
    assert registry.spent("staff")[0] == pytest.approx(2.0)
    assert len(registry.refusals("staff")) == 2  # both refusals recorded, charging nothing


def test_seeded_noise_refused_on_registered_data(app_test, registry):
    at = app_test(PAGE)
    at.session_state[MODE_KEY] = True
    at.session_state[SEED_KEY] = 7
    at.run()
    at.radio(key="dpsql_source").set_value("Registered dataset").run()
    at.button(key="dpsql_run").click().run()
    assert any("seeded" in e for e in _errors(at))
    assert registry.spent("staff") == (0.0, 0.0) and not registry.releases("staff")
    assert len(registry.refusals("staff")) == 1


def test_unregistered_runs_recorded_not_limited(app_test, registry):
    at = app_test(PAGE).run()  # the demo tables, unregistered
    for _ in range(3):
        at.button(key="dpsql_run").click().run()
        assert not _errors(at), _errors(at)
    runs = registry.releases(kind=RunKind.UNREGISTERED)
    assert len(runs) == 3 and all(r.dataset is None and r.epsilon == 1.0 for r in runs)
    assert registry.spent("staff") == (0.0, 0.0)
    reloaded = app_test(PAGE).run()
    assert any("3 run(s), ε = 3 in total" in m.value for m in reloaded.markdown)


def test_analyst_mode_registered_only_without_previews(app_test, registry, monkeypatch):
    monkeypatch.setenv("DPX_MODE", "analyst")
    at = app_test(PAGE).run()
    assert not at.exception
    assert at.radio(key="dpsql_source").options == ["Registered dataset"]
    assert not any(e.label == "Table previews" for e in at.expander)
    assert [t.label for t in at.tabs] == ["Explain", "Run", "Ledger"]
    _confirm(at)  # ε 1 of the 2.5 remaining: more than a quarter, the analyst confirms first
    at.button(key="dpsql_run").click().run()
    assert registry.spent("staff")[0] == pytest.approx(1.0)


def _confirm(at):
    assert at.button(key="dpsql_run").disabled
    box = next(c for c in at.checkbox if (c.key or "").startswith("dpsql_run::confirm"))
    box.check().run()


WIDGETS = ("radio", "selectbox", "multiselect", "text_area", "button", "number_input",
           "select_slider", "toggle", "text_input")  # fmt: skip


def test_no_file_hash_in_widget_keys_or_recorded_params(app_test, registry, monkeypatch):
    """A file's SHA-256 is a function of the raw rows (not DP: it tests a guess about one row).
    Widget keys reach the browser as CSS classes and recorded params reach reports: neither may
    carry it. Analyst mode, a release run from the page."""
    import json

    monkeypatch.setenv("DPX_MODE", "analyst")
    hashes = [t.sha256 for t in registry.dataset("staff").tables]
    assert hashes and all(len(h) == 64 for h in hashes)
    at = app_test(PAGE).run()
    _confirm(at)
    at.button(key="dpsql_run").click().run()
    assert not at.exception and not _errors(at), _errors(at)
    keys = [w.key or "" for kind in WIDGETS for w in getattr(at, kind)]
    assert "dpsql_run" in keys and "dpsql_query" in keys
    assert not any(h in k for h in hashes for k in keys)
    (release,) = registry.releases("staff")
    assert release.params["data"] == "registered:staff" and release.params["via"] == "app"
    recorded = json.dumps(release.params) + json.dumps(release.artefact)
    assert not any(h in recorded for h in hashes)


def test_each_run_says_where_it_stands_against_the_budget_plan(app_test, registry):
    """The same sentence as the CLI: as planned while the plan has room, then beyond it."""
    from core.planning.budget import parse_item

    plan = registry.save_plan("staff", "term", [parse_item("sql:1/1e-5").to_json()], 1.0, 1e-5)
    at = _open_registered(app_test)
    places = []
    for _ in range(2):
        at.button(key="dpsql_run").click().run()
        assert not at.exception and not _errors(at), _errors(at)
        places.append(next(c.value for c in at.caption if "in the registry" in c.value))
    assert f"As planned: item 'sql' of budget plan #{plan.id} (term)." in places[0]
    assert f"Beyond the plan: no item of budget plan #{plan.id} (term)" in places[1]
