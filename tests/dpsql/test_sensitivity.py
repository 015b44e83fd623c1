"""Sensitivity property (spec §7.4): removing one unit changes at most C_u partitions of
cross_user, each statistic by at most its per-partition sensitivity (integer units), and the
unit count by at most 1. The salted-hash sampling key couples both runs: other units keep
exactly the same partitions."""

from __future__ import annotations

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.dpsql.catalog import Catalog
from core.dpsql.execute.engine import Engine
from core.dpsql.service import prepare
from core.privacy import Noise

rows = st.lists(
    st.tuples(
        st.integers(1, 6),  # uid
        st.integers(0, 5),  # group
        st.one_of(st.none(), st.floats(-50, 150, allow_nan=False)),
    ),
    min_size=1,
    max_size=40,
)


def cross_user(frame: pd.DataFrame, cu: int) -> tuple[pd.DataFrame, object]:
    catalog = Catalog()
    catalog.add_private("t", frame, "uid")
    sql = (
        "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, "
        f"max_groups_contributed = {cu}) g, ANON_COUNT(*, 3) AS c, ANON_SUM(x, 0, 100) AS s, "
        "ANON_AVG(x, 0, 100) AS a FROM t GROUP BY g"
    )
    prepared = prepare(sql, catalog, Noise.seeded(42))  # same seed -> same salt in both runs
    out = Engine(catalog).frame(prepared.staged.sql("duckdb", executable=True))
    return out.set_index("k0"), prepared.plan


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=rows, cu=st.integers(1, 3), victim=st.integers(1, 6))
def test_removing_one_unit_has_bounded_effect(rows, cu, victim):
    frame = pd.DataFrame(rows, columns=["uid", "g", "x"]).astype({"x": float})  # a numeric column
    full, plan = cross_user(frame, cu)
    rest = frame[frame["uid"] != victim]
    if rest.empty:
        return
    less, _ = cross_user(rest, cu)
    sens = {m.column: m.sensitivity for m in plan.statistics}
    changed = 0
    for g in full.index.union(less.index):
        zero = {c: 0 for c in full.columns}
        a = {c: int(v) for c, v in (full.loc[g].fillna(0) if g in full.index else zero).items()}
        b = {c: int(v) for c, v in (less.loc[g].fillna(0) if g in less.index else zero).items()}
        if a == b and (g in full.index) == (g in less.index):
            continue
        changed += 1
        assert abs(int(a["n_units"]) - int(b["n_units"])) <= 1
        for col, delta in sens.items():
            if col != "n_units":
                assert abs(int(a[col]) - int(b[col])) <= delta
    assert changed <= cu
