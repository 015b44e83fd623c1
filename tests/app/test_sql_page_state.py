"""The DP SQL page's state is typed objects (issue 28, `ui.sql.request`).

* `SqlPageRequest` (a run as asked for), `BoundsRequest` (a bounds proposal) and
  `SqlPlanRequest` (the Plan step's inputs) are frozen and typed;
* each fingerprint changes with every field (the fields are iterated, so a new one cannot be
  forgotten), and equal widget values give equal fingerprints;
* the kept result and the kept bounds hold the request they were made with: changing one
  widget labels them as earlier, changing it back does not; one kept by an older page version
  (another class shape) is dropped, not drawn.
"""

from __future__ import annotations

import dataclasses

import pytest

from core.privacy import Noise
from tests.app.request_variants import check_fingerprints
from ui.noise import MODE_KEY, SEED_KEY
from ui.plan.bounds import RESULT as BOUNDS
from ui.plan.bounds import KeptBounds
from ui.plan.sql import ANSWER_KEY as PLAN
from ui.plan.sql import KeptPlan
from ui.sql.request import BoundsRequest, SqlPageRequest, SqlPlanRequest
from ui.sql.run import RESULT, ShownResult
from ui.sql.tables import SqlData

PAGE = "pages/dp_sql.py"
SQL = "SELECT WITH ANONYMIZATION dept, ANON_COUNT(*, 5) AS c FROM Employees GROUP BY dept"
EARLIER = "Earlier result"
OTHER_BOUNDS = "these bounds were drawn for other ones"


def data(key: str = "demo:x|public=[]|unit=col:uid") -> SqlData:
    """The tables step's data, as far as a request reads it (its keys)."""
    return SqlData(None, ("t",), frozenset(), ("t",), "uid", False, key, f"{key}|files")  # type: ignore[arg-type]


def test_the_page_state_is_frozen_typed_objects():
    r = SqlPageRequest.of(SQL, data(), Noise.seeded(7))
    assert r == SqlPageRequest(SQL, data().engine_key, 7)  # the data: its engine key
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.sql = "SELECT 1"  # type: ignore[misc]
    assert hash(r) == hash(SqlPageRequest.of(SQL, data(), Noise.seeded(7)))
    assert r.noise_label == Noise.seeded(7).label
    assert SqlPageRequest.of(SQL, data(), Noise.secure()).noise.is_secure
    b = BoundsRequest.of(data(), "Orders.amount", "sum", 0.5, 0.01)
    assert (b.data, b.table, b.column, b.statistic) == (data().key, "Orders", "amount", "sum")
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.epsilon = 1.0  # type: ignore[misc]
    p = SqlPlanRequest.of(SQL, ["c=5@40"], 0.95)
    assert p.targets == ("c=5@40",) and hash(p) == hash(SqlPlanRequest.of(SQL, ("c=5@40",), 0.95))


def test_equal_widgets_give_equal_fingerprints_and_any_field_changes_it():
    r = SqlPageRequest.of(SQL, data(), Noise.seeded(7))
    assert SqlPageRequest.of(SQL, data(), Noise.seeded(7)).fingerprint() == r.fingerprint()
    check_fingerprints(r, {"seed": [None, 8]})
    b = BoundsRequest.of(data(), "Orders.amount", "sum", 0.5, 0.01)
    assert BoundsRequest.of(data(), "Orders.amount", "sum", 0.5, 0.01).fingerprint() == (
        b.fingerprint()
    )
    check_fingerprints(b)
    p = SqlPlanRequest.of(SQL, ["c=5@40"], 0.95)
    check_fingerprints(p)


@pytest.fixture
def page(app_test, registry_dir):
    at = app_test(PAGE, timeout=120)
    at.session_state[MODE_KEY] = True  # reproducible demo noise
    at.session_state[SEED_KEY] = 7
    return at.run()


def earlier(at) -> bool:
    return any(EARLIER in w.value for w in at.warning)


def test_the_kept_result_holds_its_request_and_a_changed_widget_marks_it_stale(page):
    at = page
    at.button(key="dpsql_run").click().run()
    assert not at.exception, at.exception
    res = at.session_state[RESULT]
    assert isinstance(res, ShownResult) and isinstance(res.request, SqlPageRequest)
    assert res.request.sql == at.text_area(key="dpsql_query").value and res.request.seed == 7
    assert res.request.data.startswith("demo:") and not earlier(at)
    at.session_state[SEED_KEY] = 8  # another noise: the same query and data
    at.run()
    assert earlier(at)
    at.session_state[SEED_KEY] = 7  # back: the same request
    at.run()
    assert not earlier(at) and RESULT in at.session_state


def test_a_result_kept_by_an_older_page_is_dropped_not_shown(page):
    at = page
    at.session_state[RESULT] = ShownResult.__new__(ShownResult)  # none of today's fields
    at.run()
    assert not at.exception, at.exception
    assert RESULT not in at.session_state
    assert "Partitions released" not in [m.label for m in at.metric]


def _open_bounds(at):
    at.session_state["dpsql_bounds_open"] = True
    at.run()
    at.selectbox(key="dpsql_bounds_column").set_value("Orders.amount")
    at.number_input(key="dpsql_bounds_eps").set_value(0.5).run()
    assert not at.exception, at.exception
    return at


def test_kept_bounds_hold_their_request_and_a_changed_widget_labels_them(page):
    at = _open_bounds(page)
    at.button(key="dpsql_bounds_run").click().run()
    assert not at.exception, at.exception
    got = at.session_state[BOUNDS]
    assert isinstance(got, KeptBounds) and isinstance(got.request, BoundsRequest)
    r = got.request
    assert (r.table, r.column, r.statistic, r.epsilon) == ("Orders", "amount", "sum", 0.5)
    assert not any(OTHER_BOUNDS in i.value for i in at.info)
    clip = r.clip_share
    at.number_input(key="dpsql_bounds_clip").set_value(clip * 2).run()  # one widget
    assert any(OTHER_BOUNDS in i.value for i in at.info)
    at.number_input(key="dpsql_bounds_clip").set_value(clip).run()  # back
    assert not any(OTHER_BOUNDS in i.value for i in at.info)


def test_bounds_and_a_plan_kept_by_an_older_page_are_dropped_not_shown(page):
    at = page
    at.session_state["dpsql_bounds_open"] = True
    at.session_state["dpsql_plan_open"] = True
    at.session_state[BOUNDS] = KeptBounds.__new__(KeptBounds)  # none of today's fields
    at.session_state[PLAN] = KeptPlan.__new__(KeptPlan)
    at.run()
    assert not at.exception, at.exception
    assert BOUNDS not in at.session_state and PLAN not in at.session_state
