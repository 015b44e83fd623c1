"""Validator: Table 4.3 ownership rules, aggregate rules and options; each refusal's message."""

from __future__ import annotations

import pytest

from core.dpsql.service import prepare
from core.errors import InputError
from core.privacy import Noise

OPT = "OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1)"


def anon(body: str) -> str:
    return f"SELECT WITH ANONYMIZATION {OPT} {body}"


ACCEPT = [
    anon("dept, ANON_COUNT(*, 5) AS c FROM Employee E JOIN Orders O USING (uid) GROUP BY dept"),
    anon("dept, ANON_COUNT(*, 5) AS c FROM Employee E JOIN Orders O ON E.uid = O.uid AND O.amount > 0 GROUP BY dept"),
    anon("floor, ANON_SUM(age, 0, 100) AS s FROM Employee E JOIN Depts D ON E.dept = D.dept GROUP BY floor"),
    anon("floor, ANON_COUNT(*, 1) AS c FROM Employee E CROSS JOIN Depts D GROUP BY floor"),
    anon("ANON_SUM(total, 0, 50) AS s FROM (SELECT uid, SUM(amount) AS total FROM Orders GROUP BY uid) t"),
    anon("ANON_COUNT(*, 3) AS c FROM (SELECT uid, amount FROM Orders WHERE amount > 5) t"),
    "WITH big AS (SELECT uid, amount FROM Orders WHERE amount > 5) "
    f"SELECT WITH ANONYMIZATION {OPT} ANON_AVG(amount, 0, 100) AS a FROM big",
    anon("dept, COUNT(DISTINCT uid) AS n FROM Employee WHERE age > 20 AND dept IN ('HR', 'IT') GROUP BY dept HAVING n > 1 ORDER BY n DESC LIMIT 5"),
    anon("UPPER(dept) AS d, ANON_COUNT(*, 2) + 1 AS c FROM Employee GROUP BY UPPER(dept)"),
    anon("ANON_COUNT(*, 1) AS c FROM Employee WHERE dept IN (SELECT dept FROM Depts)"),
]  # fmt: skip


@pytest.mark.parametrize("sql", ACCEPT)
def test_accepted(sql, catalog_of, shop_tables):
    private, public = shop_tables
    prepared = prepare(sql, catalog_of(private, public), Noise.seeded(0))
    assert prepared.staged.stages[-1][0] == "cross_user"


REJECT = [
    (anon("dept, ANON_COUNT(*, 5) AS c FROM Employee E JOIN Orders O ON E.dept = O.amount GROUP BY dept"),
     ["DPX-V010", "not on the privacy unit", "USING (uid)"]),
    (anon("dept, ANON_COUNT(*, 5) AS c FROM Employee E CROSS JOIN Orders O GROUP BY dept"),
     ["DPX-V011", "CROSS", "JOIN O USING (uid)"]),
    (anon("dept, ANON_COUNT(*, 5) AS c FROM Employee E, Orders O GROUP BY dept"),
     ["DPX-V011"]),
    (anon("dept, ANON_COUNT(*, 5) AS c FROM Employee E JOIN Orders O ON E.uid = O.uid OR 1 = 1 GROUP BY dept"),
     ["DPX-V010"]),
    (anon("ANON_SUM(total, 0, 50) AS s FROM (SELECT day, SUM(amount) AS total, MIN(uid) AS uid FROM Orders GROUP BY day) t"),
     ["DPX-V012", "GROUP BY", "uid"]),
    (anon("ANON_SUM(amount, 0, 50) AS s FROM (SELECT amount FROM Orders) t"),
     ["DPX-V013", "does not output the privacy unit", "add uid"]),
    (anon("ANON_COUNT(*, 1) AS c FROM (SELECT uid FROM Orders LIMIT 2) t"), ["DPX-V016", "LIMIT"]),
    (anon("ANON_COUNT(*, 1) AS c FROM (SELECT uid, ROW_NUMBER() OVER () AS r FROM Orders) t"),
     ["DPX-L007", "window"]),
    (anon("ANON_COUNT(*, 1) AS c FROM Employee WHERE uid IN (SELECT uid FROM Orders)"),
     ["DPX-V016", "expression subquery"]),
    (anon("ANON_COUNT(*, 1) AS c FROM Employee E JOIN Orders O ON E.uid = O.uid AND O.amount > (SELECT MAX(amount) FROM Orders)"),
     ["DPX-V016", "expression subquery"]),
    (anon("(SELECT MAX(age) FROM Employee) AS m, ANON_COUNT(*, 1) AS c FROM Employee GROUP BY 1"),
     ["DPX-V016"]),
    (anon("dept, SUM(age) AS s FROM Employee GROUP BY dept"), ["DPX-V020", "ANON_SUM(age, 0, 100)"]),
    (anon("dept, ANON_SUM(age) AS s FROM Employee GROUP BY dept"), ["DPX-V021", "ANON_SUM(age, 0, 100)"]),
    (anon("ANON_SUM(age, 10, 1) AS s FROM Employee"), ["DPX-V022", "L = 10 > U = 1"]),
    (anon("ANON_SUM(age, 0, age) AS s FROM Employee"), ["DPX-V022", "numeric literal"]),
    ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon=1, delta=1e-5, max_groups_contributed=1) "
     "SUM(age, contribution_bounds_per_row => (0, 1)) AS s FROM Employee",
     ["DPX-V023", "contribution_bounds_per_group"]),
    (anon("COUNT(DISTINCT dept) AS d FROM Employee"), ["DPX-V024", "only allowed on the privacy unit"]),
    (anon("ANON_NTILE(age, 1.5, 0, 100) AS q FROM Employee"), ["DPX-V025", "outside [0, 1]"]),
    (anon("ANON_COUNT(*, 1) AS c FROM Employee WHERE ANON_SUM(age, 0, 1) > 0"), ["DPX-V026"]),
    (anon("dept, age, ANON_COUNT(*, 1) AS c FROM Employee GROUP BY dept"),
     ["DPX-V027", "`age`", "add it to GROUP BY"]),
    (anon("uid, ANON_COUNT(*, 1) AS c FROM Employee GROUP BY uid"), ["DPX-V028", "GROUP BY on the privacy unit"]),
    (anon("uid FROM Employee"), ["DPX-V028", "never released"]),
    (anon("dept, SUM(age, contribution_bounds_per_group => (0, 1)) FROM Employee GROUP BY dept"),
     ["DPX-V029", "ANON_SUM(x, L, U)"]),
    ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon=1, delta=1e-5, max_groups_contributed=1) "
     "ANON_SUM(age, 0, 1) FROM Employee", ["DPX-V029", "SUM(x, contribution_bounds_per_group"]),
    ("SELECT WITH ANONYMIZATION OPTIONS (delta = 1e-5, max_groups_contributed = 1) ANON_COUNT(*, 1) FROM Employee",
     ["DPX-V030", "EPSILON must be set and non-NULL"]),
    ("SELECT WITH ANONYMIZATION OPTIONS (epsilon = 0, delta = 1e-5, max_groups_contributed = 1) ANON_COUNT(*, 1) FROM Employee",
     ["DPX-V030", "> 0"]),
    ("SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, max_groups_contributed = 1) ANON_COUNT(*, 1) FROM Employee",
     ["DPX-V031", "DELTA must be set"]),
    ("SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1.01, max_groups_contributed = 1) ANON_COUNT(*, 1) FROM Employee",
     ["DPX-V031", "Delta must be in the inclusive interval [0,1], but is 1.01"]),
    ("SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 0, max_groups_contributed = 1) ANON_COUNT(*, 1) FROM Employee",
     ["DPX-V031", "nothing could ever be released"]),
    ("SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1, max_groups_contributed = 1) ANON_COUNT(*, 1) FROM Employee",
     ["DPX-V031", "no privacy guarantee"]),
    ("SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5) ANON_COUNT(*, 1) FROM Employee",
     ["DPX-V032", "max_groups_contributed"]),
    ("SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1, color = 3) ANON_COUNT(*, 1) FROM Employee",
     ["DPX-V033", "unknown option `color`"]),
    ("SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon=1, delta=1e-5, max_groups_contributed=1, privacy_unit_column = dept) "
     "COUNT(*, contribution_bounds_per_group => (0, 1)) FROM Employee", ["DPX-V014", "privacy_unit_column"]),
    (anon("floor, ANON_COUNT(*, 1) AS c FROM Depts GROUP BY floor"), ["DPX-V014", "reads no private table"]),
]  # fmt: skip


@pytest.mark.parametrize(("sql", "fragments"), REJECT)
def test_rejected_with_rule_and_fix(sql, fragments, catalog_of, shop_tables):
    private, public = shop_tables
    with pytest.raises(InputError) as err:
        prepare(sql, catalog_of(private, public), Noise.seeded(0))
    msg = str(err.value)
    for fragment in fragments:
        assert fragment in msg, msg
    assert "Fix" in msg or "Rule" in msg or "must" in msg


def test_flags_fill_missing_options_and_query_options_win(catalog_of, shop_tables):
    private, public = shop_tables
    catalog = catalog_of(private, public)
    bare = "SELECT WITH ANONYMIZATION ANON_COUNT(*, 1) AS c FROM Employee"
    defaults = {"epsilon": 2.0, "delta": 1e-6, "max_groups_contributed": 3}
    q = prepare(bare, catalog, Noise.seeded(0), defaults).query
    assert (q.options.epsilon, q.options.delta, q.options.max_groups_contributed) == (2.0, 1e-6, 3)
    written = anon("ANON_COUNT(*, 1) AS c FROM Employee")
    q = prepare(written, catalog, Noise.seeded(0), defaults).query
    assert (q.options.epsilon, q.options.delta, q.options.max_groups_contributed) == (1.0, 1e-5, 1)


def test_absurdly_small_epsilon_is_refused(catalog_of, shop_tables):
    private, public = shop_tables
    sql = (
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1e-9, delta = 1e-5, max_groups_contributed = 1) "
        "dept, ANON_COUNT(*, 5) AS c FROM Employee GROUP BY dept"
    )
    with pytest.raises(InputError) as err:
        prepare(sql, catalog_of(private, public), Noise.seeded(0))
    assert "DPX-V030" in str(err.value) and "too small" in str(err.value)
