"""Grammar-generated DP queries through the differencing oracle (issue 9).

A small grammar over the allowed language — keys, clamped aggregates over total expressions,
literal filters, joins on the unit and to public tables, option values in range — generates
valid DP queries over the oracle's catalogue. Each one must keep the DP contract on D and
D' = D minus the victim (sensitivity, thresholding, identical refusals, no crash). Hypothesis
runs derandomised with a bounded number of examples so CI sees the same queries every time.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.dpsql.oracle.harness import Victim, difference


@dataclass(frozen=True)
class Source:
    sql: str
    numeric: tuple[str, ...]  # numeric columns usable inside aggregates
    keys: tuple[str, ...]  # GROUP BY key expressions
    texts: tuple[str, ...]  # string columns usable in literal filters


SOURCES = (
    Source(
        "Users", ("salary", "age"), ("dept", "code", "age // 10", "year(joined)"), ("dept", "code")
    ),
    Source(
        "Orders",
        ("amount", "qty", "day"),
        ("item", "day", "day % 7", "date_trunc('month', ts)"),
        ("item",),
    ),
    Source(
        "Users JOIN Orders USING (uid)",
        ("salary", "amount", "qty"),
        ("dept", "item", "code"),
        ("dept", "item"),
    ),
    Source(
        "Users U JOIN Depts D ON U.dept = D.dept",
        ("salary", "age", "floor"),
        ("D.dept", "floor"),
        ("U.dept", "code"),
    ),
    Source(
        "(SELECT uid, item, SUM(amount) AS total FROM Orders GROUP BY uid, item) t",
        ("total",),
        ("item",),
        ("item",),
    ),
)


@st.composite
def value_expr(draw, source: Source) -> str:
    col = draw(st.sampled_from(source.numeric))
    return draw(
        st.sampled_from(
            [
                col,
                f"COALESCE({col}, 0)",
                f"{col} * 2",
                f"{col} + 1",
                f"abs({col})",
                f"CASE WHEN {col} > 50 THEN 1 ELSE 0 END",
                f"least({col}, 70)",
                f"CAST({col} AS DOUBLE) / 3",
            ]
        )
    )


@st.composite
def aggregate(draw, source: Source, index: int) -> str:
    kind = draw(st.sampled_from(["count", "count_col", "units", "sum", "avg", "var", "median"]))
    low = draw(st.sampled_from([0, 0, -10]))
    high = draw(st.sampled_from([1, 10, 100]))
    expr = draw(value_expr(source))
    body = {
        "count": f"ANON_COUNT(*, {draw(st.integers(1, 5))})",
        "count_col": f"ANON_COUNT({expr}, {draw(st.integers(1, 5))})",
        "units": "ANON_COUNT(DISTINCT uid)",
        "sum": f"ANON_SUM({expr}, {low}, {high})",
        "avg": f"ANON_AVG({expr}, {low}, {high})",
        "var": f"ANON_VAR({expr}, {low}, {high})",
        "median": f"ANON_MEDIAN({expr}, {low}, {high})",
    }[kind]
    return f"{body} AS a{index}"


@st.composite
def condition(draw, source: Source) -> str:
    col = draw(st.sampled_from(source.numeric))
    text = draw(st.sampled_from(source.texts))
    return draw(
        st.sampled_from(
            [
                f"{col} > {draw(st.integers(-5, 120))}",
                f"{col} IS NOT NULL",
                f"{text} IN ('HR', 'IT', 'pen')",
                f"{text} LIKE 'p%'",
                f"NOT ({col} BETWEEN 10 AND 40)",
                f"{text} <> 'Zeta'",
            ]
        )
    )


@st.composite
def dp_query(draw) -> str:
    source = draw(st.sampled_from(SOURCES))
    keys = draw(st.lists(st.sampled_from(source.keys), max_size=2, unique=True))
    aggs = [draw(aggregate(source, i)) for i in range(draw(st.integers(1, 3)))]
    cu = draw(st.integers(1, 3))
    eps = draw(st.sampled_from(["0.5", "1", "4", "1e6"]))
    delta = draw(st.sampled_from(["1e-5", "1e-7", "1e-10"]))
    items = [f"{k} AS k{i}" for i, k in enumerate(keys)] + aggs
    sql = (
        f"SELECT WITH ANONYMIZATION OPTIONS (epsilon = {eps}, delta = {delta}, "
        f"max_groups_contributed = {cu}) {', '.join(items)} FROM {source.sql}"
    )
    if draw(st.booleans()):
        sql += f" WHERE {draw(condition(source))}"
    if keys:
        sql += " GROUP BY " + ", ".join(keys)
    return sql


@settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(sql=dp_query(), victim=st.sampled_from(list(Victim)))
def test_generated_queries_keep_the_dp_contract(sql, victim):
    verdict = difference(sql, victim)
    assert not verdict.violations, verdict.summary() + "\n" + sql
