"""AppTest of the PP page's publications in the release registry: a registered dataset's
publication is a recorded release of tool "pp" ((ρ1, ρ2), no ε charged) with its metadata
attached; a demo table is recorded as an unregistered run; seeded noise on a registered dataset
not flagged teaching is refused and recorded as a refusal."""

from __future__ import annotations

import pytest

from core.balancing.demos import DEMOS, PATIENTS_NAME
from core.registry import Policy, Registry, RunKind, Status
from ui.noise import MODE_KEY, SEED_KEY

PAGE = "pages/pp_balancing.py"


@pytest.fixture
def registry(registry_dir, tmp_path, monkeypatch) -> Registry:
    """A registry with dataset 'patients' (the synthetic patients demo table as a CSV)."""
    monkeypatch.delenv("DPX_MODE", raising=False)
    path = tmp_path / "patients.csv"
    next(d for d in DEMOS if d.name == PATIENTS_NAME).load().to_csv(path, index=False)
    reg = Registry(registry_dir)
    reg.add_dataset("patients", [("patients", path)], Policy(1.0, 1e-5))
    return reg


def _registered(at):
    at.run()
    at.radio(key="pp_source").set_value("Registered dataset").run()
    at.selectbox(key="pp_sa_registered:patients").set_value("Disease")
    at.text_input(key="pp_rho1_registered:patients").set_value("1/5")
    at.text_input(key="pp_rho2_registered:patients").set_value("1/2").run()
    assert not at.exception, at.exception
    return at


def test_registered_publication_is_a_recorded_release(app_test, registry):
    at = _registered(app_test(PAGE))
    at.button(key="pp_publish").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    (release,) = registry.releases("patients")
    assert release.tool == "pp" and release.kind is RunKind.RELEASE
    assert release.status is Status.RELEASED
    # the partition plan's ε is charged (issue 16), from the mechanism that drew its noise
    # (and the δ of listing the values that occur above a noisy threshold); the registry keeps
    # the very objects that drew, one PP randomization per published sub-table
    row, threshold, *pp = release.mechanisms
    assert row.kind.value == "discrete Laplace" and (row.sensitivity, row.scale) == (2, 2.0)
    assert "threshold" in threshold.kind.value and 0 < threshold.delta <= 1e-6
    assert (release.epsilon, release.delta) == (1.0, threshold.cost.delta)
    record = release.artefact  # the typed PP record (core/balancing/record.py)
    assert record["tool"] == "pp" and record["published_columns"] == ["Disease", "subtable"]
    assert len(pp) == len(record["subtables"]) and {m.kind.value for m in pp} == {
        "PP randomization"
    }
    for m, sub in zip(pp, record["subtables"], strict=True):
        assert (
            str(m.retention) == sub["retention"]
            and str(m.posterior_bound) == sub["posterior_bound"]
        )
    assert release.claim.rho1 == "1/5" and release.claim.rho2 == "1/2"
    assert "epsilon 1" in record["plan"]
    assert release.params["sa"] == "Disease" and release.params["noise"] == "secure"
    assert release.params["columns"] == ["Disease"]  # the SA alone by default
    assert any(f"release #{release.id} of dataset **patients**" in i.value for i in at.info)
    assert registry.spent("patients") == (1.0, threshold.cost.delta)


def test_demo_publication_recorded_as_unregistered(app_test, registry):
    at = app_test(PAGE).run()
    at.button(key="pp_publish").click().run()
    assert not at.exception
    (run,) = registry.releases(kind=RunKind.UNREGISTERED)
    assert run.dataset is None and run.tool == "pp" and run.params["data"] == "demo:pp-figure9"
    assert any(f"unregistered run #{run.id}" in i.value for i in at.info)


def test_seeded_publication_refused_on_registered_data(app_test, registry):
    at = app_test(PAGE)
    at.session_state[MODE_KEY] = True
    at.session_state[SEED_KEY] = 3
    at = _registered(at)
    at.button(key="pp_publish").click().run()
    assert any("seeded" in e.value for e in at.error)
    assert not registry.releases("patients") and len(registry.refusals("patients")) == 1
    assert not at.get("download_button")  # nothing published
