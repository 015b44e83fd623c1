"""PP demo tables: Figure 9 counts, the seeded synthetic patients, the optional real table."""

from __future__ import annotations

from fractions import Fraction as F

import pandas as pd

from core.balancing.demos import DEMOS, FIGURE9_COUNTS, figure9_table
from core.balancing.plan import plan_partition
from core.balancing.records import encode_sa
from core.balancing.synthetic import DISEASES, patient_table
from core.data.demos import DEMO_DATA_DIR


def test_figure9_table_and_file():
    df = figure9_table()
    assert len(df) == 42
    assert encode_sa(df["SA"]).counts() == FIGURE9_COUNTS
    shipped = pd.read_csv(DEMO_DATA_DIR / "pp" / "figure9.csv")
    assert shipped.equals(df)


def test_patient_table_seeded_and_skewed():
    a = patient_table(n=10_000, seed=1)
    b = patient_table(n=10_000, seed=1)
    assert a.equals(b) and len(a) == 10_000
    assert {"age", "sex", "zip3", "admission_year", "insurance"} <= set(a.columns)
    assert abs(sum(DISEASES.values()) - 1) < 1e-12
    share = a["Disease"].value_counts(normalize=True)
    assert share.index[0] == "Hypertension" and share.iloc[0] > 0.2  # 0.22 +- 4 sd < 0.017
    plan = plan_partition(encode_sa(patient_table()["Disease"]).counts(), F(1, 5), F(1, 2))
    assert "Hypertension" in plan.t2 and plan.status == "ok"


def test_demos_registered_as_tables():
    names = [d.name for d in DEMOS]
    assert names[:2] == ["pp-figure9", "pp-synthetic-patients"]
    assert all(d.kind == "table" and d.licence for d in DEMOS)
    assert len(DEMOS[1].load()) >= 10_000
