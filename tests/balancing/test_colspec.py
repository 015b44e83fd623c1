"""Issue 28: PP's three publication paths — in memory (pandas), streamed (DuckDB) and Spark —
write the columns one spec describes (`core.balancing.colspec`): the same header, in the same
order, with the same types and spellings for the same input. Before the spec, the in-memory
path wrote a declared boolean column as True/False and DuckDB as true/false."""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest

from core.balancing.colspec import Kind, column_spec, header
from core.balancing.names import SEEDED_MARKER, SUBTABLE_COLUMN
from core.balancing.service import PPParams, PPSource, prepare, run_to_file
from core.privacy import Accountant, Noise

N = 400
COLUMNS = ("flag", "num", "txt", "ratio")


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {
            "race": rng.choice(list("abcd"), N, p=[0.5, 0.3, 0.15, 0.05]),
            "flag": rng.random(N) < 0.5,
            "num": rng.integers(0, 5, N),
            "txt": rng.choice(["x", "y", None], N),
            "ratio": rng.random(N).round(2) + 0.01,
        }
    )
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    return path


def _published(path, source: PPSource, out, seed=3):
    params = PPParams("race", "0.3", "0.6", categories=tuple("abcd"), missing="drop",
                      columns=COLUMNS)  # fmt: skip
    prepared = prepare(params, source)
    accountant = Accountant(Noise.seeded(seed), budget=prepared.cost, rho=prepared.rho)
    filed = run_to_file(prepared, accountant, out)
    assert filed.metadata["published_columns"] == list(prepared.published_header)
    return filed.out


def _paths(path, tmp_path) -> dict:
    paths = {
        "duckdb": _published(path, PPSource.of_file(path), tmp_path / "stream.csv"),
        "pandas": _published(path, PPSource.of_frame(pd.read_csv(path)), tmp_path / "mem.csv"),
    }
    if importlib.util.find_spec("pyspark") is not None:
        prepared = prepare(
            PPParams("race", "0.3", "0.6", categories=tuple("abcd"), missing="drop",
                     columns=COLUMNS, engine="spark"), PPSource.of_file(path),
        )  # fmt: skip
        accountant = Accountant(Noise.seeded(3), budget=prepared.cost, rho=prepared.rho)
        paths["spark"] = run_to_file(prepared, accountant, tmp_path / "spark.csv").out
    return paths


def test_the_paths_write_the_spec_s_header_types_and_spellings(table, tmp_path):
    spec = column_spec("race", ["race", *COLUMNS], seeded=True)
    expected = header(spec)
    assert expected == [SEEDED_MARKER, "race", *COLUMNS, SUBTABLE_COLUMN]
    files = _paths(table, tmp_path)
    typed = {name: pd.read_csv(f, keep_default_na=False) for name, f in files.items()}
    for name, frame in typed.items():
        assert list(frame.columns) == expected, name
    dtypes = {name: frame.dtypes.astype(str).to_dict() for name, frame in typed.items()}
    first = next(iter(dtypes.values()))
    assert all(d == first for d in dtypes.values()), dtypes
    assert first["flag"] == "bool" and first["num"] == "int64" and first["ratio"] == "float64"
    for name, f in files.items():
        frame = pd.read_csv(f, dtype=str, keep_default_na=False)  # the spellings
        assert set(frame["flag"].astype(str)) <= {"true", "false"}, name  # one spelling
        assert "(missing)" in set(frame["txt"]), name  # a missing cell, labelled
        assert frame[SUBTABLE_COLUMN].astype(int).min() >= 1 and frame[SEEDED_MARKER].eq("seeded").all()


def test_the_spec_kinds_are_in_order():
    spec = column_spec("b", ["a", "b", "c"], seeded=False)
    assert [c.kind for c in spec] == [Kind.DECLARED, Kind.SA, Kind.DECLARED, Kind.SUBTABLE]
    assert header(spec, files=False) == ["a", "b", "c", SUBTABLE_COLUMN]
    assert all(c.type and c.written for c in spec)


@pytest.mark.skipif(importlib.util.find_spec("pyspark") is None, reason="pyspark missing")
def test_spark_is_among_the_paths_compared(table, tmp_path):
    assert "spark" in _paths(table, tmp_path)
