"""Issue 28: an analyst declares the SA's categories on the PP page as with `dpx balance
--categories`, so the publication costs δ = 0 on both doors; a dataset whose schema declares
the SA's categories prefills the field with them (never with values read from the data)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.balancing.demos import DEMOS, PATIENTS_NAME
from core.data.relation import propose
from core.registry import Policy, Registry
from tests.app.test_pp_analyst import PAGE, _ready, publish

FIELD = "pp_categories_registered:patients_Disease"


def _diseases():
    df = next(d for d in DEMOS if d.name == PATIENTS_NAME).load()
    return df, sorted(df["Disease"].dropna().unique())


@pytest.fixture
def patients(registry_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("DPX_MODE", "analyst")
    df, _ = _diseases()
    path = tmp_path / "patients.csv"
    df.to_csv(path, index=False)
    return Registry(registry_dir), path


def test_an_analyst_s_declared_categories_cost_no_delta(app_test, patients):
    reg, path = patients
    reg.add_dataset("patients", [("patients", path)], Policy(2.0, 1e-5))
    at = _ready(app_test(PAGE))
    assert at.text_input(key=FIELD).value == ""  # nothing read from the data
    _, diseases = _diseases()
    at.text_input(key=FIELD).set_value(", ".join(diseases)).run()
    publish(at)
    assert not at.exception and not at.error, [e.value for e in at.error]
    (release,) = reg.releases("patients")
    assert release.delta == 0 and release.epsilon == pytest.approx(1.0)
    assert release.params["categories"] == diseases


def test_the_schema_s_categories_are_the_default(app_test, patients):
    reg, path = patients
    _, diseases = _diseases()
    schema = propose(path)
    fact = replace(schema.column("Disease"), categories=tuple(diseases))
    reg.add_dataset("patients", [("patients", path)], Policy(2.0, 1e-5),
                    schemas={"patients": schema.with_column(fact)})  # fmt: skip
    at = _ready(app_test(PAGE))
    assert at.text_input(key=FIELD).value == ", ".join(diseases)
    publish(at)
    assert not at.exception and not at.error, [e.value for e in at.error]
    (release,) = reg.releases("patients")
    assert release.delta == 0


def test_a_failure_after_the_charge_on_the_page_is_failed_and_the_charge_stands(
    app_test, patients, monkeypatch
):
    """The page's door through the same service: a fault injected in `run` (after the
    charge) is reported without its text, the release is failed and its charge stands."""
    import ui.pp.publish

    reg, path = patients
    reg.add_dataset("patients", [("patients", path)], Policy(2.0, 1e-5))

    def broken(prepared, accountant):
        raise RuntimeError("injected fault after the charge")

    monkeypatch.setattr(ui.pp.publish, "run", broken)
    at = _ready(app_test(PAGE))
    _, diseases = _diseases()
    at.text_input(key=FIELD).set_value(", ".join(diseases)).run()
    publish(at)
    errors = " ".join(e.value for e in at.error)
    assert "stands" in errors and "injected" not in errors, errors
    (release,) = reg.releases("patients")
    assert release.status.value == "failed"
    assert reg.spent("patients") == pytest.approx((1.0, 0.0))
