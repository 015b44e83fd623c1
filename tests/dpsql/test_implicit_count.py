"""Issue 19 item 2: COUNT(*) and COUNT(x) without contribution bounds follow ZetaSQL/BigQuery's
documented behaviour (bounds derived from the data in a differentially private way, part of
ε spent on them), and every fix hint fits its aggregate.

Before this change `COUNT(*)` without bounds was refused with a fix that showed a SUM."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.dpsql.aggregates.implicit_count import BOUND_QUANTILE, MAX_BOUND_EXPONENT
from core.dpsql.catalog import Catalog
from core.dpsql.execute.engine import Engine
from core.dpsql.parse.ir import AggKind
from core.dpsql.service import explain, prepare
from core.dpsql.sql.bigquery import to_bigquery
from core.errors import InputError
from core.privacy import Cost, DiscreteLaplace, Exponential, Noise
from tests.dpsql.helpers import release_of

ZETA = "SELECT WITH DIFFERENTIAL_PRIVACY OPTIONS (epsilon = {eps}, delta = 1e-5, max_groups_contributed = 1)"
PAPER = (
    "SELECT WITH ANONYMIZATION OPTIONS (epsilon = {eps}, delta = 1e-5, max_groups_contributed = 1)"
)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    """300 units with 1-3 orders of one item each (C_u = 1 loses nothing), plus one unit with
    500 orders."""
    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 4, 300)
    uids = np.repeat(np.arange(300), sizes)
    items = np.repeat(rng.choice(["ink", "pen"], 300), sizes)
    orders = pd.DataFrame(
        {
            "uid": np.concatenate([uids, np.full(500, 999)]),
            "item": np.concatenate([items, np.full(500, "pen")]),
            "qty": np.concatenate([rng.integers(1, 5, len(uids)), np.ones(500, int)]),
        }
    )
    cat = Catalog()
    cat.add_private("Orders", orders, "uid")
    return cat


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        (ZETA + " item, COUNT(*) AS n FROM Orders GROUP BY item", AggKind.IMPLICIT_COUNT_ROWS),
        (ZETA + " item, COUNT(qty) AS n FROM Orders GROUP BY item", AggKind.IMPLICIT_COUNT_VALUES),
        (
            PAPER + " item, ANON_COUNT(*) AS n FROM Orders GROUP BY item",
            AggKind.IMPLICIT_COUNT_ROWS,
        ),
        (
            PAPER + " item, ANON_COUNT(qty) AS n FROM Orders GROUP BY item",
            AggKind.IMPLICIT_COUNT_VALUES,
        ),
    ],
)
def test_counts_without_bounds_are_accepted_and_charge_the_query_epsilon(catalog, sql, kind):
    prepared = prepare(sql.format(eps=1), catalog, Noise.seeded(0))
    assert [a.kind for a in prepared.query.aggregates] == [kind]
    assert prepared.cost == Cost(1.0, 1e-5) or prepared.cost.epsilon == pytest.approx(1.0)
    bound, count = (m for m in prepared.mechanisms if not m.label.startswith("partition"))
    assert isinstance(bound, Exponential) and isinstance(count, DiscreteLaplace)
    assert bound.cost.epsilon == pytest.approx(count.cost.epsilon)  # half the share each
    info = explain(prepared)
    assert info["half_widths_95"]["n"] is None  # depends on the bound chosen from the data


def test_at_huge_epsilon_the_count_is_exact_below_the_chosen_bound(catalog):
    """With ε = 1e9 the noise vanishes: the released count is Σ min(count, U) per item, and U
    covers the ordinary units (1-3 orders) but not the one with 500."""
    noise = Noise.seeded(3)
    sql = ZETA.format(eps=1e9) + " item, COUNT(*) AS n FROM Orders GROUP BY item"
    result = release_of(prepare(sql, catalog, noise), Engine(catalog), noise)
    frame = catalog.get("Orders").frame
    per_pair = frame.groupby(["item", "uid"]).size()
    note = next(n for n in result.released.notes if "U = " in n)
    bound = int(note.split("U = ")[1].split(" ")[0])
    share = (per_pair <= bound).mean()
    assert share >= BOUND_QUANTILE  # U covers the quantile of (unit, item) counts ...
    assert bound < 500  # ... and not the heavy unit's
    expected = per_pair.clip(upper=bound).groupby("item").sum()
    got = dict(zip(result.table["item"], result.table["n"], strict=True))
    for item, value in expected.items():
        assert got[item] == pytest.approx(value, abs=1e-6)


def test_the_bound_is_a_power_of_two_among_public_candidates(catalog):
    seen = set()
    for seed in range(12):
        noise = Noise.seeded(seed)
        sql = ZETA.format(eps=1) + " item, COUNT(*) AS n FROM Orders GROUP BY item"
        result = release_of(prepare(sql, catalog, noise), Engine(catalog), noise)
        note = next(n for n in result.released.notes if "U = " in n)
        seen.add(int(note.split("U = ")[1].split(" ")[0]))
    assert all(b in {2**c for c in range(MAX_BOUND_EXPONENT + 1)} for b in seen)
    assert min(seen) <= 4  # most runs choose a small bound for 1-3 orders per unit


def test_bigquery_export_keeps_the_count_without_bounds(catalog):
    prepared = prepare(ZETA.format(eps=1) + " item, COUNT(*) AS n FROM Orders GROUP BY item",
                       catalog, Noise.seeded(0))  # fmt: skip
    text, _ = to_bigquery(prepared.query, "uid")
    assert "COUNT(*) AS n" in text


BOUNDLESS = {
    "ANON_SUM(qty)": "ANON_SUM(qty, 0, 100)",
    "ANON_AVG(qty)": "ANON_AVG(qty, 0, 100)",
    "ANON_VAR(qty)": "ANON_VAR(qty, 0, 100)",
    "ANON_STDDEV_POP(qty)": "ANON_STDDEV_POP(qty, 0, 100)",
    "ANON_MEDIAN(qty)": "ANON_MEDIAN(qty, 0, 100)",
    "ANON_NTILE(qty, 0.5)": "ANON_NTILE(qty, 0.5, 0, 100)",
}
BOUNDLESS_ZETA = {
    "SUM(qty)": "SUM(qty, contribution_bounds_per_group => (0, 100))",
    "AVG(qty)": "AVG(qty, contribution_bounds_per_group => (0, 100))",
    "VAR_POP(qty)": "VAR_POP(qty, contribution_bounds_per_row => (0, 100))",
    "STDDEV_POP(qty)": "STDDEV_POP(qty, contribution_bounds_per_row => (0, 100))",
    "PERCENTILE_CONT(qty, 0.5, weight => 1)": "PERCENTILE_CONT(qty, 0.5, contribution_bounds_per_row",
}


@pytest.mark.parametrize(
    ("call", "fix", "form"),
    [(c, f, PAPER) for c, f in BOUNDLESS.items()]
    + [(c, f, ZETA) for c, f in BOUNDLESS_ZETA.items()],
)
def test_every_fix_hint_fits_its_aggregate(catalog, call, fix, form):
    with pytest.raises(InputError) as err:
        prepare(f"{form.format(eps=1)} {call} AS v FROM Orders", catalog, Noise.seeded(0))
    text = str(err.value)
    assert text.startswith("DPX-V021") and f"Fix: e.g. {fix}" in text, text


@pytest.mark.parametrize(
    ("call", "fix"),
    [("COUNT(*)", "ANON_COUNT(*, 5)"), ("SUM(qty)", "ANON_SUM(qty, 0, 100)"),
     ("AVG(qty)", "ANON_AVG(qty, 0, 100)"), ("MAX(qty)", "ANON_MAX(qty, 0, 100)")],
)  # fmt: skip
def test_plain_aggregates_in_the_paper_form_get_their_own_dp_spelling(catalog, call, fix):
    with pytest.raises(InputError) as err:
        prepare(f"{PAPER.format(eps=1)} {call} AS v FROM Orders", catalog, Noise.seeded(0))
    assert str(err.value).startswith("DPX-V020") and fix in str(err.value)
