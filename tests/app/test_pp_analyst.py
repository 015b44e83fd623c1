"""AppTest of the PP page in analyst mode: registered datasets only, nothing computed from the
raw table on screen (no counts, SA chart, Phase 1 steps, sub-table table, evaluation, INTERNAL
report), a publication that works and is recorded as a release of the dataset."""

from __future__ import annotations

import pytest

from core.balancing.demos import DEMOS, PATIENTS_NAME
from core.registry import Policy, Registry, RunKind
from tests.app.conftest import element_texts

PAGE = "pages/pp_balancing.py"
SENTINEL = "ZQX-SENTINEL-9051"


@pytest.fixture
def registry(registry_dir, tmp_path, monkeypatch) -> Registry:
    """Dataset 'patients' with one planted patient id (a sentinel) and analyst mode on."""
    monkeypatch.setenv("DPX_MODE", "analyst")
    df = next(d for d in DEMOS if d.name == PATIENTS_NAME).load().copy()
    df.loc[0, "patient_id"] = SENTINEL
    path = tmp_path / "patients.csv"
    df.to_csv(path, index=False)
    reg = Registry(registry_dir)
    reg.add_dataset("patients", [("patients", path)], Policy(1.0, 1e-5))
    return reg


def _ready(at):
    at.run()
    assert at.radio(key="pp_source").options == ["Registered dataset"]
    at.selectbox(key="pp_sa_registered:patients").set_value("Disease")
    at.text_input(key="pp_rho1_registered:patients").set_value("1/5")
    at.text_input(key="pp_rho2_registered:patients").set_value("1/2").run()
    at.radio(key="pp_missing").set_value("drop those records").run()  # always asked
    assert not at.exception, at.exception
    return at


def publish(at):
    """Press Publish; the plan's ε is more than a quarter of the remaining budget, so the
    analyst first confirms (issue 16.5)."""
    boxes = [c for c in at.checkbox if (c.key or "").startswith("pp_publish::confirm")]
    if boxes:
        assert at.button(key="pp_publish").disabled
        boxes[0].check().run()
    at.button(key="pp_publish").click().run()


def test_analyst_publishes_a_recorded_release_and_sees_no_raw_value(app_test, registry):
    at = _ready(app_test(PAGE))
    assert not at.metric and not at.get("plotly_chart")  # no counts, SA chart or steps
    assert not any(b.key == "pp_next" for b in at.button)  # no Phase 1 step-through
    assert not at.dataframe  # no sub-table table computed from the raw counts
    publish(at)
    assert not at.exception and not at.error, [e.value for e in at.error]
    (release,) = registry.releases("patients")
    assert release.kind is RunKind.RELEASE and release.params["role"] == "analyst"
    assert release.params["columns"] == ["Disease"]  # the SA only: no column declared
    assert release.epsilon == 1.0  # the partition plan's ε is charged
    assert release.params["data"] == "registered:patients"  # not the file's SHA-256
    labels = [b.label for b in at.get("download_button")]
    assert labels == ["Published CSV", "Sub-table metadata"]  # no INTERNAL report
    plan, estimates = at.dataframe  # the published (noisy) plan; the estimates from it only
    assert "planned size (noisy)" in plan.value.columns
    assert set(estimates.value["SA value"]) >= {"Diabetes", "Depression"}
    assert any(f"release #{release.id}" in i.value for i in at.info)
    assert not any("evaluation only" in c.value for c in at.caption)
    texts = "\n".join(element_texts(at._tree))
    assert "Diabetes" in texts  # the check sees table contents (control)
    assert SENTINEL not in texts


def test_owner_mode_still_shows_the_teaching_views(app_test, registry, monkeypatch):
    """Control: the same checks find the raw-data views in owner mode (the test can fail)."""
    monkeypatch.delenv("DPX_MODE")
    at = app_test(PAGE).run()
    at.radio(key="pp_source").set_value("Registered dataset").run()
    at.selectbox(key="pp_sa_registered:patients").set_value("Disease").run()
    assert at.metric and at.get("plotly_chart") and at.dataframe


def test_analyst_cannot_add_a_column_and_a_stale_publication_is_not_shown(app_test, registry):
    """Issue 16: no 'columns to remove' list (the analyst publishes the SA and the owner's
    declared columns only); issue 18: switching the SA after a publication showed another
    column's raw values as if published and crashed on mixed types/NaN (TypeError '<')."""
    at = _ready(app_test(PAGE))
    assert not at.multiselect  # nothing to choose: the analyst cannot add a column
    publish(at)
    assert at.get("download_button")
    at.selectbox(key="pp_sa_registered:patients").set_value("insurance").run()
    assert not at.exception, at.exception
    assert not at.get("download_button")  # the Disease publication is not shown under insurance


def test_analyst_publishes_the_owner_declared_columns_only(app_test, registry_dir, tmp_path,
                                                          monkeypatch):  # fmt: skip
    """Issue 16: the owner declares publishable columns on the dataset; the analyst publication
    holds the SA and exactly those (never the unit column, nothing the analyst adds)."""
    monkeypatch.setenv("DPX_MODE", "analyst")
    df = next(d for d in DEMOS if d.name == PATIENTS_NAME).load()
    path = tmp_path / "patients.csv"
    df.to_csv(path, index=False)
    reg = Registry(registry_dir)
    reg.add_dataset("patients", [("patients", path)], Policy(1.0, 1e-5), uid="patient_id",
                    publishable=("sex", "age"))  # fmt: skip
    at = _ready(app_test(PAGE))
    publish(at)
    assert not at.exception and not at.error, [e.value for e in at.error]
    (release,) = reg.releases("patients")
    assert release.params["columns"] == ["age", "sex", "Disease"]  # table order
    published = release.artefact["published_columns"]
    assert published == ["age", "sex", "Disease", "subtable"] and "patient_id" not in published
