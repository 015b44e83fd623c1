"""Issue 28 item 3: the DP SQL planner covers every aggregate the validator accepts, COUNT(*)
without contribution bounds included. Before, `dpx plan sql` refused `COUNT(*) AS stops` with
"'stops' (IMPLICIT_COUNT_ROWS) has no public half-width" — an internal name, for a count."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from core.dpsql.catalog import Catalog
from core.dpsql.execute.engine import Engine
from core.dpsql.parse.ir import AggKind
from core.dpsql.service import explain, prepare
from core.errors import InputError
from core.planning.sql import plan_sql, prepared_at
from core.planning.sql_targets import parse_target
from core.privacy import Noise
from tests.dpsql.helpers import release_of

ZETA = (
    "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = 1, delta = 1e-5, "
    "max_groups_contributed = 1) hood, {agg} FROM stops GROUP BY hood"
)
PAPER = (
    "SELECT WITH ANONYMIZATION OPTIONS (epsilon = 1, delta = 1e-5, "
    "max_groups_contributed = 1) hood, {agg} FROM stops GROUP BY hood"
)
INTERNAL = [k.value for k in AggKind if "_" in k.value]  # IMPLICIT_COUNT_ROWS, COUNT_UNITS, ...


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    """2000 units, one stop each, in one of two neighbourhoods (a bound of 1 row per unit)."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"uid": np.arange(2000), "hood": rng.choice(["north", "south"], 2000)})
    cat = Catalog()
    cat.add_private("stops", frame, "uid")
    return cat


def _count_row(prepared, name: str) -> dict:
    """The count mechanism's row of DP SQL's explain (its stated 95 % half-width)."""
    return next(
        r
        for r in explain(prepared)["budget_split"]
        if r["aggregate"] == name and r["component"] == "count"
    )


@pytest.mark.parametrize(
    "text", [ZETA.format(agg="COUNT(*) AS stops"), PAPER.format(agg="ANON_COUNT(*) AS stops")]
)
def test_count_star_is_planned_at_its_count_mechanisms_stated_accuracy(catalog, text):
    base = prepare(text, catalog, Noise.seeded(0))
    plan = plan_sql(base, (parse_target("stops=20"),))
    (check,) = plan.as_written.checks
    assert check.met and math.isfinite(check.planned) and 0 < check.planned <= 20
    at = prepared_at(base, plan.epsilon)
    # the half-width planned is the one DP SQL states for the count mechanism at that epsilon
    assert check.planned == pytest.approx(_count_row(at, "stops")["half_width_95"])
    assert plan.epsilon < 1e3
    # the plan says what it assumes, in the user's words, never the internal kind name
    words = "COUNT(*)" if text.startswith("SELECT WITH DIFF") else "ANON_COUNT(*)"
    assert f"({words}, no contribution bounds)" in plan.describe()
    shown = json.dumps([plan.describe(), [r.label for r in plan.as_written.rows]])
    assert not any(name in shown for name in INTERNAL), shown


def test_a_release_at_the_planned_epsilon_states_the_planned_interval_times_its_bound(catalog):
    """The release's stated 95 % interval is the planned half-width times the bound U it chose
    privately (the plan's note says so): U = 1 gives exactly the planned width."""
    base = prepare(ZETA.format(agg="COUNT(*) AS stops"), catalog, Noise.seeded(0))
    plan = plan_sql(base, (parse_target("stops=20"),))
    planned = plan.as_written.checks[0].planned
    at = prepared_at(base, plan.epsilon)
    for seed in (3, 4):
        result = release_of(at, Engine(catalog), Noise.seeded(seed))
        (note,) = [n for n in result.released.notes if "U = " in n]
        bound = int(note.split("U = ")[1].split(" ")[0])
        widths = (result.released.intervals[0][:, 1] - result.released.intervals[0][:, 0]) / 2
        assert widths == pytest.approx(np.full(len(widths), bound * planned))


def test_relative_targets_on_count_star_are_planned(catalog):
    base = prepare(ZETA.format(agg="COUNT(*) AS stops"), catalog, Noise.seeded(0))
    plan = plan_sql(base, (parse_target("stops=10%@200"),))
    (check,) = plan.as_written.checks
    assert check.met and check.planned <= 20 and check.survival >= 0.95


def test_refusals_name_the_aggregate_as_written(catalog):
    text = ZETA.format(
        agg="PERCENTILE_CONT(uid, 0.5, contribution_bounds_per_row => (0, 2000)) AS mid"
    )
    base = prepare(text, catalog, Noise.seeded(0))
    with pytest.raises(InputError) as err:
        plan_sql(base, (parse_target("mid=5"),))
    assert "'mid' (PERCENTILE_CONT(" in str(err.value)
    assert not any(name in str(err.value) for name in [*INTERNAL, "QUANTILE"])
