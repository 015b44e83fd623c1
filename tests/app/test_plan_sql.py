"""AppTest of the DP SQL page's Plan step: targets → `core.planning.sql.plan_sql`'s ε, split,
threshold and survival, and the planned ε written into the query's OPTIONS; nothing charged."""

from __future__ import annotations

from core.planning.sql import plan_sql
from core.planning.sql_targets import parse_target
from core.registry import Registry
from ui.glossary import in_app
from ui.plan.sql import ANSWER_KEY, parse_targets, with_epsilon

PAGE = "pages/dp_sql.py"


def test_with_epsilon_rewrites_only_the_one_options_epsilon():
    sql = "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5) my_epsilon = 3 FROM t"
    assert with_epsilon(sql, 0.25) == sql.replace("epsilon = 1,", "epsilon = 0.25,")
    assert with_epsilon("SELECT 1 FROM t", 0.5) is None  # no OPTIONS: the page shows the ε
    two = "SELECT WITH ANONYMIZATION OPTIONS (epsilon=1, epsilon=2) x FROM t"
    assert with_epsilon(two, 0.5) is None
    assert with_epsilon("OPTIONS (epsilon=1e-1)", 3.0) == "OPTIONS (epsilon=3)"


def test_parse_targets_reads_lines_and_commas():
    assert parse_targets("c=5\n  s=10@20 , n=5%@100\n\n") == ["c=5", "s=10@20", "n=5%@100"]


def test_plan_step_plans_and_writes_the_epsilon_into_the_query(app_test, registry_dir):
    at = app_test(PAGE, timeout=120)
    at.run()
    at.session_state["dpsql_plan_open"] = True
    at.run()
    assert not at.exception, at.exception
    at.text_area(key="dpsql_plan_targets").set_value("c=5@40").run()
    at.button(key="dpsql_plan_run").click().run()
    assert not at.exception, at.exception
    plan = at.session_state[ANSWER_KEY].plan
    query = at.text_area(key="dpsql_query").value
    expected = plan_sql(_prepared(at, query), [parse_target("c=5@40")], 0.95)
    assert plan.epsilon == expected.epsilon and plan.as_written.threshold == (
        expected.as_written.threshold
    )
    assert any(s.value == in_app(expected.describe()) for s in at.success)
    at.button(key="dpsql_plan_use").click().run()
    assert not at.exception, at.exception
    assert at.text_area(key="dpsql_query").value == with_epsilon(query, expected.epsilon)
    assert any(s.value == in_app(expected.describe()) for s in at.success)  # still on screen
    assert Registry().releases() == []  # planning charged nothing


def _prepared(at, sql):
    """The page's query prepared from the demo tables' schema (public parameters only)."""
    from core.dpsql.catalog import Catalog
    from core.dpsql.demos import employee_orders
    from core.dpsql.service import prepare
    from core.privacy import Noise

    catalog = Catalog()
    for name, frame in employee_orders().items():
        catalog.add_private(name, frame.iloc[:0], "uid")
    return prepare(sql, catalog, Noise.secure(), {"epsilon": 1.0})


def test_a_bad_target_is_one_line_in_the_step_and_the_page_goes_on(app_test, registry_dir):
    at = app_test(PAGE, timeout=120)
    at.run()
    at.session_state["dpsql_plan_open"] = True
    at.run()
    at.text_area(key="dpsql_plan_targets").set_value("nosuch=5").run()
    at.button(key="dpsql_plan_run").click().run()
    assert not at.exception, at.exception
    assert any("nosuch" in e.value for e in at.error)  # the planner's one-line refusal
    assert [b for b in at.button if b.key == "dpsql_run"]  # Run is still drawn below
    assert ANSWER_KEY not in at.session_state
