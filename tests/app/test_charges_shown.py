"""Charges a person sees before they happen (issue 16.5) and the analyst's PP columns (16.4):
every page says what its button will charge, against which dataset's remaining budget; in
analyst mode a click spending more than a quarter of the remaining budget waits for a
confirmation; the location page builds Recommended alone by default; an analyst publishes only
the SA and the columns the owner declared, and the owner's default publishes the SA alone."""

from __future__ import annotations

import pytest

from core.balancing.demos import DEMOS as PP_DEMOS
from core.balancing.demos import PATIENTS_NAME
from core.dpsql.demos import DEMOS as SQL_DEMOS
from core.registry import Policy, Registry
from tests.registry.helpers import write_points

LOCATION = "pages/location_histograms.py"
PP = "pages/pp_balancing.py"
SQL = "pages/dp_sql.py"


@pytest.fixture
def registry(registry_dir, tmp_path, monkeypatch) -> Registry:
    """'visits' (points, ε 2), 'patients' (PP table, ε 1, publishable: age), 'staff' (SQL,
    ε 2.5)."""
    monkeypatch.delenv("DPX_MODE", raising=False)
    reg = Registry(registry_dir)
    reg.add_dataset("visits", [("t", write_points(tmp_path / "v.csv"))], Policy(2.0))
    patients = next(d for d in PP_DEMOS if d.name == PATIENTS_NAME).load()
    patients.to_csv(tmp_path / "p.csv", index=False)
    reg.add_dataset("patients", [("patients", tmp_path / "p.csv")], Policy(1.0, 1e-5))
    reg.set_publishable("patients", ["age"])
    files = []
    for name, frame in next(d for d in SQL_DEMOS if d.name == "sql-employee-orders").load().items():
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
        files.append((name, tmp_path / f"{name}.csv"))
    reg.add_dataset("staff", files, Policy(2.5, 1e-4), uid="uid")
    return reg


def statements(at) -> list[str]:
    """What the page's release button will charge (the line drawn just above it)."""
    return [m.value for m in at.markdown if m.value.startswith("**") and (
        "** charges " in m.value or "** uses " in m.value)]  # fmt: skip


def test_location_default_is_recommended_alone_and_says_what_build_charges(app_test, registry):
    at = app_test(LOCATION).run()
    assert at.multiselect(key="lh_methods").value == ["auto"]
    at.radio(key="lh_source").set_value("Registered dataset").run()
    at.selectbox(key="lh_dataset").set_value("visits").run()
    next(s for s in at.selectbox if s.key.startswith("lh_region_")).set_value("custom").run()
    for i, v in enumerate([-118.5, 33.7, -117.9, 34.3]):
        next(n for n in at.number_input if n.key.startswith(f"lh_bb{i}_")).set_value(v)
    at.run()
    (text,) = statements(at)
    assert "**Build releases** charges ε 0.5" in text and "dataset **visits**" in text
    assert "remaining budget is ε 2" in text


def test_sql_run_says_what_it_charges(app_test, registry):
    at = app_test(SQL).run()
    assert any("**Run query** uses ε 1, δ 1e-05" in s for s in statements(at))  # demo data
    at.radio(key="dpsql_source").set_value("Registered dataset").run()
    at.selectbox(key="dpsql_dataset").set_value("staff").run()
    (text,) = statements(at)
    assert "charges ε 1, δ 1e-05 to dataset **staff**" in text
    assert "remaining budget is ε 2.5, δ 0.0001" in text


def _analyst_sql(app_test, monkeypatch):
    monkeypatch.setenv("DPX_MODE", "analyst")
    at = app_test(SQL).run()
    at.selectbox(key="dpsql_dataset").set_value("staff").run()
    return at


def test_analyst_confirms_a_click_that_spends_over_a_quarter(app_test, registry, monkeypatch):
    at = _analyst_sql(app_test, monkeypatch)  # ε 1 of 2.5 remaining: 40 %
    assert at.button(key="dpsql_run").disabled
    box = next(c for c in at.checkbox if c.key.startswith("dpsql_run::confirm"))
    assert "spend ε 1 of the 2.5 remaining" in box.label
    box.check().run()
    at.button(key="dpsql_run").click().run()
    assert registry.spent("staff")[0] == pytest.approx(1.0)
    # the next click asks again (the confirmation is for one charge): ε 1 of 1.5
    assert at.button(key="dpsql_run").disabled


def test_analyst_small_click_needs_no_confirmation(app_test, registry, monkeypatch):
    at = _analyst_sql(app_test, monkeypatch)
    query = at.text_area(key="dpsql_query").value.replace("epsilon = 1", "epsilon = 0.5")
    at.text_area(key="dpsql_query").set_value(query).run()  # ε 0.5 of 2.5: 20 %
    assert not at.button(key="dpsql_run").disabled
    assert not any(c.key.startswith("dpsql_run::confirm") for c in at.checkbox)


def test_owner_is_never_asked_to_confirm(app_test, registry):
    at = app_test(SQL).run()
    at.radio(key="dpsql_source").set_value("Registered dataset").run()
    at.selectbox(key="dpsql_dataset").set_value("staff").run()
    assert not at.button(key="dpsql_run").disabled


def _pp_registered(at):
    at.radio(key="pp_source").set_value("Registered dataset").run()
    at.selectbox(key="pp_dataset").set_value("patients").run()
    at.selectbox(key="pp_sa_registered:patients").set_value("Disease")
    at.text_input(key="pp_rho1_registered:patients").set_value("1/5").run()
    if any(r.key == "pp_missing" for r in at.radio):
        at.radio(key="pp_missing").set_value("drop those records").run()
    return at


def test_analyst_publishes_the_sa_and_the_declared_columns_only(app_test, registry, monkeypatch):
    monkeypatch.setenv("DPX_MODE", "analyst")
    at = app_test(PP).run()
    at.selectbox(key="pp_dataset").set_value("patients").run()
    at.selectbox(key="pp_sa_registered:patients").set_value("Disease")
    at.text_input(key="pp_rho1_registered:patients").set_value("1/5").run()
    at.radio(key="pp_missing").set_value("drop those records").run()
    assert not any(m.key.startswith("pp_keep") for m in at.multiselect)  # cannot add a column
    assert any("declared publishable: `age`" in m.value for m in at.markdown)
    (text,) = statements(at)  # the partition plan's ε (and δ), against the dataset's budget
    assert "**Publish (perturb)** charges ε 1, δ" in text and "dataset **patients**" in text
    next(c for c in at.checkbox if c.key.startswith("pp_publish::confirm")).check().run()
    at.button(key="pp_publish").click().run()
    (release,) = registry.releases("patients")
    assert release.params["columns"] == ["age", "Disease"]  # table order
    assert set(release.artefact["published_columns"]) == {"age", "Disease", "subtable"}


def test_owner_default_publishes_the_sa_alone_unless_columns_are_chosen(app_test, registry):
    at = app_test(PP).run()  # the Figure 9 demo: columns record, sa
    keep = next(m for m in at.multiselect if m.key.startswith("pp_keep"))
    assert keep.value == []
    at.button(key="pp_publish").click().run()
    published = at.dataframe[-1].value
    assert set(published.columns) == {"SA", "subtable"}
    # a registered dataset: the SA alone too, and only the declared columns can be added
    at = _pp_registered(app_test(PP).run())
    keep = next(m for m in at.multiselect if m.key.startswith("pp_keep"))
    assert keep.value == [] and keep.options == ["age"]
