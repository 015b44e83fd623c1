"""Shared data for registry tests: a small deterministic points table with a unit column."""

import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd

BBOX = "--bbox=-118.5,33.7,-117.9,34.3"
QUERY = (
    "SELECT WITH ANONYMIZATION OPTIONS(epsilon={eps}, delta=1e-6, max_groups_contributed=1) "
    "sa, ANON_COUNT(*, 1) AS n FROM t GROUP BY sa"
)


def write_points(path: Path, n: int = 400, seed: int = 7) -> Path:
    rng = np.random.default_rng(seed)
    pd.DataFrame(
        {
            "uid": np.arange(n),
            "lat": 34.0 + rng.normal(0, 0.05, n),
            "lon": -118.2 + rng.normal(0, 0.05, n),
            "sa": rng.choice(["a", "b", "c", "d"], n, p=[0.4, 0.3, 0.2, 0.1]),
        }
    ).to_csv(path, index=False)
    return path


def as_v3_registry(path: Path) -> None:
    """Rewrite the registry database at `path` as a v3 registry left it: no schemas, schema
    changes or restores (v4), no accounting (v5)."""
    con = sqlite3.connect(path)
    for name in ("table_schemas", "schema_changes", "restores"):
        con.execute(f"DROP TABLE {name}")
    con.execute("DROP TABLE accounting_changes")  # and v5's accounting (issue 33)
    con.execute("ALTER TABLE datasets DROP COLUMN accounting")
    con.execute("DELETE FROM schema_version WHERE version >= 4")
    con.commit()
    con.close()
