"""The PP balancing page's state is typed objects (issue 28, `ui.pp.request`).

* `PPPageRequest` (a publication as asked for), `ExactPlanRequest` (the exact plan the Phase 1
  stepper is on) and `PPPlanRequest` (the Plan step's inputs) are frozen and typed;
* each fingerprint changes with every field, nested ones included (the fields are iterated, so
  a new one cannot be forgotten), and equal widget values give equal fingerprints;
* the kept publication holds the request it was made with: changing one widget labels it as
  earlier, naming that widget only; another plan drops it; one kept by an older page version
  (another class shape) is dropped, not drawn.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

from core.balancing.demos import FIGURE9_COUNTS
from core.planning.pp import PPShape
from core.privacy import Noise
from tests.app.request_variants import check_fingerprints
from ui.noise import MODE_KEY, SEED_KEY
from ui.pp.params import PPSettings, ReleaseOptions
from ui.pp.publish import PUBLICATION, Published
from ui.pp.request import ExactPlanRequest, PPPageRequest, PPPlanRequest

PAGE = "pages/pp_balancing.py"
DATA = "demo:pp-figure9"
EARLIER = "Earlier publication"


def settings(**changes) -> PPSettings:
    base = PPSettings(DATA, "SA", "1/3", "2/3", "error", "stable", "none")
    return dataclasses.replace(base, **changes)


def options(**changes) -> ReleaseOptions:
    return dataclasses.replace(ReleaseOptions(("SA",), 0.5, ("a", "b"), False), **changes)


def request(seed: int | None = 7) -> PPPageRequest:
    return PPPageRequest.of(settings(), options(), Noise.from_seed(seed))


def test_the_page_state_is_frozen_typed_objects():
    r = request()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.seed = 1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.settings.rho1 = "1/4"  # type: ignore[misc]
    assert isinstance(r.settings, PPSettings) and isinstance(r.options, ReleaseOptions)
    assert hash(r) == hash(request())  # hashable: every part frozen
    assert r.noise.seed == 7 and request(None).noise.is_secure
    assert r.params().rho1 == Fraction(1, 3) and r.params().columns == ()  # the SA is apart
    exact = ExactPlanRequest.of(settings(), FIGURE9_COUNTS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        exact.tie = "value_order"  # type: ignore[misc]
    assert hash(exact) == hash(ExactPlanRequest.of(settings(), dict(FIGURE9_COUNTS)))


def test_equal_widgets_give_equal_fingerprints_and_any_field_changes_it():
    r = request()
    assert request().fingerprint() == r.fingerprint()  # built again from the same widgets
    # every field of the request, of its settings and of its options (None seed: secure)
    n = check_fingerprints(r, {"seed": [None, 8], "options.categories": [None, ("a",)]})
    inner = len(dataclasses.fields(PPSettings)) + len(dataclasses.fields(ReleaseOptions))
    assert n == inner + 3  # two seeds, two categories
    assert inner + 1 == len(r.changes(dataclasses.replace(  # every difference is named in words
        r, settings=settings(sa="x", rho1="1/4", rho2="3/4", missing="drop", tie="value_order",
                             merge="utility", data="other"),
        options=options(columns=("SA", "x"), plan_epsilon=1.0, categories=None,
                        accept_fallback=True), seed=8,
    )))  # fmt: skip


def test_the_exact_plan_and_plan_step_requests_change_with_every_field():
    exact = ExactPlanRequest.of(settings(), FIGURE9_COUNTS)
    assert exact.fingerprint() == ExactPlanRequest.of(settings(), FIGURE9_COUNTS).fingerprint()
    other_counts = tuple(reversed(exact.counts))
    check_fingerprints(exact, {"counts": [other_counts, exact.counts[:-1]]})
    shape = PPShape.uniform(["a", "b", "c"], 300)
    plan = PPPlanRequest(shape, 2.0, 0.95, 0.5, Fraction(1, 3), Fraction(2, 3))
    shapes = [PPShape.uniform(["a", "b"], 300), PPShape.uniform(["a", "b", "c"], 301),
              dataclasses.replace(shape, declared_shares=True)]  # fmt: skip
    check_fingerprints(plan, {"shape": shapes})


def test_changes_name_what_differs_in_words():
    r = request()
    assert r.changes(r) == []
    later = dataclasses.replace(r, settings=settings(rho1="1/4"), seed=None)
    assert r.changes(later) == ["ρ1: 1/3 → 1/4", "noise: seeded (seed 7) → secure"]
    assert r.changes(dataclasses.replace(r, options=options(plan_epsilon=1.0))) == [
        "plan ε: 0.5 → 1.0"
    ]
    assert r.same_plan(dataclasses.replace(r, options=options(plan_epsilon=1.0), seed=8))
    assert not r.same_plan(dataclasses.replace(r, settings=settings(tie="value_order")))


def earlier(at) -> list[str]:
    return [w.value for w in at.warning if EARLIER in w.value]


@pytest.fixture
def page(app_test, registry_dir):
    at = app_test(PAGE)
    at.session_state[MODE_KEY] = True  # reproducible demo noise
    at.session_state[SEED_KEY] = 7
    return at.run()


def test_the_kept_publication_holds_its_request_and_one_changed_widget_marks_it_stale(page):
    at = page
    at.button(key="pp_publish").click().run()
    assert not at.exception, at.exception
    p = at.session_state[PUBLICATION]
    assert isinstance(p, Published) and isinstance(p.request, PPPageRequest)
    r = p.request
    assert (r.data, r.settings.sa, r.settings.rho1, r.settings.rho2) == (DATA, "SA", "1/3", "2/3")
    assert r.seed == 7 and r.options.columns == ("SA",)
    assert earlier(at) == []
    eps = r.options.plan_epsilon
    at.number_input(key="pp_plan_epsilon").set_value(eps + 0.5).run()  # one release option
    (warning,) = earlier(at)
    assert f"(plan ε: {eps} → {eps + 0.5})" in warning  # names what changed, nothing else
    at.number_input(key="pp_plan_epsilon").set_value(eps).run()  # back: the same request
    assert earlier(at) == []
    at.session_state[SEED_KEY] = 8  # another noise
    at.run()
    (warning,) = earlier(at)
    assert "(noise: seeded (seed 7) → seeded (seed 8))" in warning
    at.session_state[SEED_KEY] = 7
    at.run()
    assert earlier(at) == [] and PUBLICATION in at.session_state
    at.text_input(key=f"pp_rho2_{DATA}").set_value("3/4").run()  # another plan: dropped
    assert not at.exception, at.exception
    assert PUBLICATION not in at.session_state and earlier(at) == []


def test_a_new_exact_plan_sends_the_stepper_back_to_step_one(page):
    at = page
    at.button(key="pp_next").click().run()
    at.button(key="pp_next").click().run()
    assert at.slider(key="pp_step").value == 3
    at.text_input(key=f"pp_rho1_{DATA}").set_value("1/3").run()  # the same widgets: kept
    assert at.slider(key="pp_step").value == 3
    at.radio(key="pp_tie").set_value("value_order").run()  # another plan: from the start
    assert not at.exception, at.exception
    assert at.slider(key="pp_step").value == 1


def test_a_publication_kept_by_an_older_page_is_dropped_not_shown(page):
    """A session's work is kept on disk across restarts: a Published pickled before the typed
    request (no `request`) is forgotten, not drawn (it would fail on its missing fields)."""
    at = page
    at.session_state[PUBLICATION] = Published.__new__(Published)  # none of today's fields
    at.run()
    assert not at.exception, at.exception
    assert PUBLICATION not in at.session_state
    assert not any("pp_publish_chart" in (c.proto.id or "") for c in at.get("plotly_chart"))
