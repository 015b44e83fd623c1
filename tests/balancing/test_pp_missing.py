"""Missing values are a category of their own everywhere - plan, evaluation, publication - and
have one spelling, "(missing)" (issue 18 item 4).

The issue's stops table, SA race with missing values as a category, published with
policePrecinct and citationIssued: the evaluation read "race=(missing) AND policePrecinct=4:
true 0 (actual 1547)", "citationIssued=nan: true 0 (actual 826)" and its 95 % intervals covered
84-92 % of the true counts. A table shaped like it reproduces all three.
"""

from __future__ import annotations

from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest

from core.balancing.estimate import estimate_distribution, random_count_queries
from core.balancing.names import SUBTABLE_COLUMN
from core.balancing.publish import publish
from core.balancing.records import MISSING_LABEL
from core.balancing.release import ReleaseSettings
from core.privacy import Accountant, Noise

RACES = ["White", "Black", "Asian", "Native American", "East African", "Latino"]
SETTINGS = ReleaseSettings(F(1, 3), F(2, 3), missing="category")


@pytest.fixture(scope="module")
def stops() -> pd.DataFrame:
    rng = np.random.default_rng(18)
    n = 20_000
    race = rng.choice(RACES, n, p=[0.3, 0.3, 0.1, 0.05, 0.1, 0.15]).astype(object)
    race[rng.random(n) < 0.12] = np.nan
    precinct = rng.integers(1, 6, n).astype(float)
    precinct[rng.random(n) < 0.05] = np.nan
    citation = rng.choice(["YES", "NO"], n).astype(object)
    citation[rng.random(n) < 0.3] = np.nan
    return pd.DataFrame({"race": race, "policePrecinct": precinct, "citationIssued": citation})


def release(df: pd.DataFrame, seed: int):
    acc = Accountant(Noise.seeded(seed), SETTINGS.cost, SETTINGS.claim)
    return publish(df, "race", ["race", "policePrecinct", "citationIssued"], SETTINGS, acc)


def queries(df, pub, seed: int, n: int = 150) -> pd.DataFrame:
    return random_count_queries(
        df, pub.table, "race", SUBTABLE_COLUMN, pub.metadata["subtables"],
        ["policePrecinct", "citationIssued"], Noise.seeded(seed), n_queries=n,
    )  # fmt: skip


def independent_truth(df: pd.DataFrame, query: str) -> int:
    """The true count of "race = x AND col = v", missing spelled (missing) on both sides."""
    x, rest = query.split(" = ", 1)[1].split(" AND ")
    col, level = rest.split(" = ")
    filled = df.astype(object).where(df.notna(), MISSING_LABEL).astype(str)
    return int(((filled["race"] == x) & (filled[col] == level)).sum())


def test_true_counts_count_missing_values(stops):
    pub = release(stops, 1)
    report = queries(stops, pub, 2)
    involved = report["query"].str.contains(MISSING_LABEL, regex=False)
    assert involved.sum() >= 10  # the workload does ask about missing values
    for query, true in zip(report["query"], report["true"], strict=True):
        assert true == independent_truth(stops, query), query
    assert (report.loc[involved, "true"] > 0).all()  # never the "true 0"


def test_interval_coverage_is_nominal_across_publications(stops):
    """95 % intervals over 16 publications x 150 queries: a correct estimator covers about 95 %
    (0.928-0.963 over ten other seed sets: queries of one publication are correlated); the
    issue measured 84-92 %, the miscounts alone bring this table to 70 %."""
    covered = []
    for seed in range(16):
        pub = release(stops, 100 + seed)
        covered.extend(queries(stops, pub, 200 + seed)["covered"].tolist())
    assert np.mean(covered) >= 0.915


def test_publication_spells_missing_one_way(stops):
    pub = release(stops, 3)
    t = pub.table
    assert MISSING_LABEL in set(t["race"]) and MISSING_LABEL in set(t["citationIssued"])
    assert not t.isna().any().any()  # no NaN, None or "nan" written
    assert not (t.astype(str) == "nan").any().any()
    assert pub.metadata["missing_values"] == {"policy": "category", "label": MISSING_LABEL}
    assert MISSING_LABEL in pub.metadata["plan_counts"]
    assert "(missing)" in pub.csv()


def test_estimates_of_a_mixed_type_column_with_missing_values():
    """The analyst page's TypeError ('<' between float and str): a published SA column holding
    strings, floats and NaN is read as labels, never sorted as raw values."""
    published = pd.DataFrame(
        {
            "race": pd.Series(["White", np.nan, 2.0, "Black", np.nan, "White"], dtype=object),
            SUBTABLE_COLUMN: [1] * 6,
        }
    )
    meta = [{"id": 1, "p": "1/2", "q": "1/8", "domain": ["White", "Black", "2.0", MISSING_LABEL]}]
    est = {e.value: e for e in estimate_distribution(published, "race", SUBTABLE_COLUMN, meta)}
    assert set(est) == {"White", "Black", "2.0", MISSING_LABEL}
    # (f* - |S| q) / p with f* = 2 missing of |S| = 6 rows
    assert est[MISSING_LABEL].estimate == (2 - F(6, 8)) / F(1, 2)
