"""The location page's Plan step keeps typed requests (issue 28): what a pilot was drawn on and
what a plan was computed from, each with a fingerprint that every field changes; an answer kept
by an older page version (a tuple signature) is dropped, not shown."""

from __future__ import annotations

import dataclasses

import pytest

from tests.app.request_variants import variants
from ui.plan.location_request import BasisKind, LocationPlanRequest, PilotData, PlanBasis

DATA = PilotData("demo:x", "lat", "lon", "uid", 3, (2.2, 48.7, 2.5, 49.0))
REQUEST = LocationPlanRequest(
    PlanBasis(BasisKind.NEW_PILOT, release_id=4, epsilon=0.2, data=DATA),
    0.1, ("auto", "ug"), 256, 256,
)  # fmt: skip
GIVEN = {
    "basis.kind": [BasisKind.RECORDED_PILOT, BasisKind.DECLARED],
    "basis.declared_n": [10_000],
    "basis.declared_shape": ["city"],
    "basis.data.person": [None, "other"],
    "basis.data.per_person": [None, 5],
    "basis.data.bbox": [(2.2, 48.7, 2.6, 49.0)],
}


def test_requests_are_frozen_and_equal_inputs_give_equal_fingerprints():
    with pytest.raises(dataclasses.FrozenInstanceError):
        REQUEST.target = 0.2  # type: ignore[misc]
    again = LocationPlanRequest(
        PlanBasis(BasisKind.NEW_PILOT, 4, 0.2, PilotData(*dataclasses.astuple(DATA))),
        0.1, ("auto", "ug"), 256, 256,
    )  # fmt: skip
    assert again.fingerprint() == REQUEST.fingerprint()


def test_every_field_changes_the_fingerprint():
    seen = {REQUEST.fingerprint()}
    for name, changed in variants(REQUEST, GIVEN).items():
        for other in changed:
            print_ = other.fingerprint()
            assert print_ != REQUEST.fingerprint(), f"{name} does not change the fingerprint"
            seen.add(print_)
    assert len(seen) > len(dataclasses.fields(REQUEST))


def test_an_answer_kept_by_an_older_page_is_dropped(app_test):
    from ui.plan.location import ANSWER_KEY, Basis

    at = app_test("pages/location_histograms.py", timeout=180)
    at.session_state["lh_plan_open"] = True
    at.session_state["lh_plan_basis"] = Basis.DECLARED  # a basis that needs no pilot
    at.session_state[ANSWER_KEY] = ("an old KeptPlan", ("declared", 10_000, "city"))
    at.run()
    assert not at.exception, at.exception
    assert ANSWER_KEY not in at.session_state  # dropped, not shown
