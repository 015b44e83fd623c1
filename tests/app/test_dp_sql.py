"""AppTest of the DP SQL page: explain, run, refusals, teaching view (the registry's budget:
tests/app/test_dp_sql_registry.py)."""

from __future__ import annotations

import pytest

from ui.noise import MODE_KEY, SEED_KEY

PAGE = "pages/dp_sql.py"


@pytest.fixture
def page(app_test, registry_dir):
    at = app_test(PAGE)
    at.session_state[MODE_KEY] = True  # reproducible demo noise
    at.session_state[SEED_KEY] = 7
    return at.run()


def frame_with(at, *columns: str):
    """The first dataframe holding all `columns` (AppTest does not look dataframes up by key)."""
    for element in at.dataframe:
        if set(columns) <= set(element.value.columns):
            return element.value
    raise AssertionError(f"no dataframe with columns {columns}")


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_explain_shows_stages_threshold_and_split(page):
    at = page
    assert not at.exception
    assert "FROM Employee E JOIN Orders O USING (uid)" in at.text_area(key="dpsql_query").value
    m = metrics(at)
    # ANON_COUNT + unit count: eps_tau = 1/2, delta = 1e-5, C_u = 1 -> tau 22.64, T 24 (spec §2.8)
    assert m["τ (Wilson)"] == "22.64"
    assert m["T (integer threshold applied)"] == "24"
    code = "\n".join(c.value for c in at.code)
    for stage in ("src AS", "per_user AS", "sampled AS", "clamped AS", "cross_user AS"):
        assert stage in code
    split = frame_with(at, "aggregate", "component", "epsilon")
    assert split["epsilon"].sum() == pytest.approx(1.0)


def test_transpile_to_spark(page):
    at = page
    at.selectbox(key="dpsql_dialect").set_value("spark").run()
    assert any("RAND()" in c.value for c in at.code)


def test_run_releases_rows_and_updates_ledger(page):
    at = page
    at.button(key="dpsql_run").click().run()
    assert not at.exception
    table = frame_with(at, "dept", "c")
    assert set(table["dept"]) == {"HR", "Sales"}  # IT (3 people) is below T
    assert "c ±95%" in table.columns
    assert metrics(at)["Partitions released"] == "2"
    ledger = frame_with(at, "mechanism", "protects", "epsilon")
    assert ledger["epsilon"].sum() == pytest.approx(1.0)
    assert ledger["delta"].sum() == pytest.approx(1e-5)
    runs = frame_with(at, "id", "kind", "ε", "query")  # recorded in the (empty) registry
    assert runs["kind"].tolist() == ["demo"] and runs["ε"].tolist() == [1.0]  # seeded: demo run


def test_refused_query_shows_the_rule(page):
    at = page
    at.text_area(key="dpsql_query").set_value(
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, "
        "max_groups_contributed = 1) uid FROM Employee"
    ).run()
    assert any("DPX-V028" in e.value for e in at.error)


def test_teaching_view_is_labelled_not_private(page):
    at = page
    at.toggle(key="dpsql_teach").set_value(True).run()
    assert not at.exception
    assert any("not private" in e.value and "for learning only" in e.value for e in at.error)
    assert any("not private — for learning only" in m.value for m in at.markdown)
    per_user = frame_with(at, "k0", "_uid", "p0")
    assert {"k0", "_uid", "p0"} <= set(per_user.columns)


def test_builder_composes_a_runnable_query(page):
    at = page
    at.radio(key="dpsql_compose").set_value("Builder").run()
    at.selectbox(key="dpsql_b_from").set_value("Employee JOIN Orders USING (uid)").run()
    at.multiselect(key="dpsql_b_keys").set_value(["dept"]).run()
    at.selectbox(key="dpsql_b_kind").set_value("SUM").run()
    at.selectbox(key="dpsql_b_col").set_value("amount").run()
    at.number_input(key="dpsql_b_hi").set_value(100.0).run()
    at.button(key="dpsql_b_use").click().run()
    query = at.text_area(key="dpsql_query").value
    assert "ANON_SUM(amount, 0, 100) AS value" in query and "GROUP BY dept" in query
    assert not at.exception and not at.error[1:]


# -- work survives navigation; stale results never pass for current ones ---------------------
INCIDENTS_CSV = b"district,citation\n" + b"".join(
    f"{d},{c}\n".encode() for d in ("north", "south") * 30 for c in ("Y",)
)
COUNT_BY_DISTRICT = (
    "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 5, delta = 1e-5, max_groups_contributed = 1) "
    "district, ANON_COUNT(*, 1) AS n FROM incidents GROUP BY district"
)


@pytest.fixture
def shell(app_test):
    """The whole app (app.py's navigation) on the DP SQL page, in reproducible demo mode."""
    at = app_test("app.py")
    at.session_state[MODE_KEY] = True
    at.run()
    return at.switch_page(PAGE).run()


def test_query_and_result_survive_navigating_home_and_back(shell):
    at = shell
    at.selectbox(key="dpsql_example").set_value("Count, sum and average (paper form)").run()
    query = at.text_area(key="dpsql_query").value
    at.button(key="dpsql_run").click().run()
    released = frame_with(at, "dept", "c", "s", "a")
    at.switch_page("pages/home.py").run()
    assert at.title[0].value == "DP Explorer"
    at.switch_page(PAGE).run()
    assert not at.exception
    assert at.selectbox(key="dpsql_example").value == "Count, sum and average (paper form)"
    assert at.text_area(key="dpsql_query").value == query
    assert len(at.tabs) == 4
    assert metrics(at)["Partitions released"] == str(len(released))
    assert frame_with(at, "dept", "c", "s", "a").equals(released)
    assert not any("Earlier result" in w.value for w in at.warning)


def test_result_of_an_earlier_query_is_labelled(page):
    at = page
    at.button(key="dpsql_run").click().run()
    at.text_area(key="dpsql_query").set_value(
        at.text_area(key="dpsql_query").value.replace("ANON_COUNT(*, 5)", "ANON_COUNT(*, 4)")
    ).run()
    assert any("Earlier result" in w.value for w in at.warning)
    at.button(key="dpsql_run").click().run()
    assert not any("Earlier result" in w.value for w in at.warning)


def test_demo_group_sizes_are_labelled_not_private(page):
    sizes = frame_with(page, "dept", "units (exact)", "vs T")
    assert dict(zip(sizes["dept"], sizes["vs T"], strict=True)) == {
        "Sales": "above T", "HR": "above T", "IT": "below T"
    }  # fmt: skip
    assert any("NOT PRIVATE" in e.label for e in page.expander)


def test_upload_without_a_unit_column_asks_and_offers_row_ids(app_test):
    at = app_test(PAGE)
    at.session_state[MODE_KEY] = True
    at.session_state["dpsql_source"] = "Upload CSV/Parquet"
    at.session_state["dpsql_upload::files"] = [("incidents.csv", INCIDENTS_CSV)]  # uploaded earlier
    at.run()
    assert not at.exception
    assert any("nothing is guessed" in i.value for i in at.info)
    assert any("privacy unit" in m.value.lower() for m in at.markdown)
    assert not at.tabs  # no query runs before the unit is chosen
    unit = next(r for r in at.radio if r.label == "What is the privacy unit?")
    unit.set_value("Each row is one person").run()
    assert any("row-id column `row_id`" in i.value for i in at.info)
    at.text_area(key="dpsql_query").set_value(COUNT_BY_DISTRICT).run()
    at.button(key="dpsql_run").click().run()
    assert not at.exception
    counts = frame_with(at, "district", "n")
    # 30 rows (= 30 units) per district; count noise at epsilon 2.5 has scale 0.4
    assert dict(zip(counts["district"], counts["n"], strict=True)) == pytest.approx(
        {"north": 30, "south": 30}, abs=3
    )


def test_a_chosen_unit_column_that_looks_wrong_is_questioned(app_test):
    at = app_test(PAGE)
    at.session_state["dpsql_source"] = "Upload CSV/Parquet"
    at.session_state["dpsql_upload::files"] = [("incidents.csv", INCIDENTS_CSV)]
    at.run()
    next(r for r in at.radio if r.label == "What is the privacy unit?").set_value(
        "A column says whose data each row is"
    ).run()
    assert at.selectbox[-1].value is None  # no column is pre-selected
    at.selectbox[-1].set_value("citation").run()
    assert not at.exception
    assert any("only 1 distinct value(s) in 60 rows" in w.value for w in at.warning)


def test_run_tab_states_the_limits_and_caps(page):
    limits = next(c.value for c in page.caption if c.value.startswith("Limits:"))
    assert "120 s" in limits and "keeps its charge" in limits and "Per-query caps: none." in limits


_DP = "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1)"
REFUSALS = {  # rule -> a query on the demo tables that core refuses with it (issue 9)
    "DPX-L001": f"{_DP} O.person, ANON_COUNT(*, 1) AS c FROM Orders AS O(person, uid) "
    "GROUP BY O.person",
    "DPX-A010": f"{_DP} dept, ANON_COUNT(*, 5) AS c FROM Employee WHERE IF(uid = 7, 'x', '0') = 0 "
    "GROUP BY dept",
    "DPX-A002": f"{_DP} dept, ANON_COUNT(*, 5) AS c FROM Employee WHERE name LIKE dept "
    "GROUP BY dept",
    "DPX-A005": f"{_DP} ANON_SUM(x, 0, 10) AS s FROM (SELECT uid, abs(MIN(amount)) AS x "
    "FROM Orders GROUP BY uid) o",
    "DPX-V033": f"{_DP[:-1]}, max_rows_per_group = 2.5) ANON_VAR(amount, 0, 100) AS v FROM Orders",
}


@pytest.mark.parametrize("rule", sorted(REFUSALS))
def test_page_shows_core_refusals_with_their_fix(page, rule):
    """The page shows exactly core's refusal: the rule code, the rule and the fix."""
    from core.dpsql.catalog import Catalog
    from core.dpsql.demos import employee_orders
    from core.dpsql.service import prepare
    from core.errors import InputError
    from core.privacy import Noise

    catalog = Catalog()
    for name, frame in employee_orders().items():
        catalog.add_private(name, frame, "uid")
    with pytest.raises(InputError) as refused:
        prepare(REFUSALS[rule], catalog, Noise.seeded(0))
    expected = str(refused.value)
    assert expected.startswith(rule) and "Fix:" in expected
    at = page
    at.text_area(key="dpsql_query").set_value(REFUSALS[rule]).run()
    assert not at.exception
    assert [e.value for e in at.error] == [expected]
