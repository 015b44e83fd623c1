"""Public facts are declared, never read from the private data (issue 27), tried the way an
attacker works: two neighbouring registered datasets that differ in one person, the same
analyst query on both. Whether it is accepted, refused or fails — and every byte of what the
analyst sees before the release — must not depend on that person.

Before this issue a Parquet footer's null count (or pandas' inference on a CSV) turned an
integer column with one missing value into DOUBLE, so `LEFT(region, cnt)` was refused for free
exactly when the target's `cnt` was missing; and the dry run printed the files' byte sizes."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.cli.conftest import run_dpx

OPTIONS = "OPTIONS (epsilon = 1, delta = 1e-5, max_groups_contributed = 1)"
N = 60
TARGET = 999

# One column of each declared type, a value for everyone else, and a query whose acceptance
# depends on that column's type (a function that takes an integer, a float, text, ...).
COLUMNS = {
    "int": (pa.int64(), lambda i: i % 5,
            f"SELECT WITH ANONYMIZATION {OPTIONS} region, "
            "ANON_SUM(LENGTH(LEFT(region, v)), 0, 5) AS s FROM t GROUP BY region"),
    "float": (pa.float64(), lambda i: i / 7,
              f"SELECT WITH ANONYMIZATION {OPTIONS} region, "
              "ANON_SUM(FLOOR(v), 0, 10) AS s FROM t GROUP BY region"),
    "text": (pa.string(), lambda i: f"w{i % 4}",
             f"SELECT WITH ANONYMIZATION {OPTIONS} region, "
             "ANON_SUM(LENGTH(UPPER(v)), 0, 5) AS s FROM t GROUP BY region"),
    "bool": (pa.bool_(), lambda i: i % 2 == 0,
             f"SELECT WITH ANONYMIZATION {OPTIONS} v, ANON_COUNT(*, 5) AS c FROM t GROUP BY v"),
    "date": (pa.date32(), lambda i: dt.date(2024, 1, 1 + i % 28),
             f"SELECT WITH ANONYMIZATION {OPTIONS} region, "
             "ANON_SUM(EXTRACT(DAY FROM v), 0, 31) AS s FROM t GROUP BY region"),
    "timestamp": (pa.timestamp("us"), lambda i: dt.datetime(2024, 1, 1, i % 24),
                  f"SELECT WITH ANONYMIZATION {OPTIONS} region, "
                  "ANON_SUM(EXTRACT(HOUR FROM v), 0, 24) AS s FROM t GROUP BY region"),
}  # fmt: skip


def _write(path, kind: str, with_target: bool) -> None:
    arrow_type, value, _ = COLUMNS[kind]
    uid = list(range(N)) + ([TARGET] if with_target else [])
    values = [value(i) for i in range(N)] + ([None] if with_target else [])
    table = pa.table(
        {
            "uid": pa.array(uid, pa.int64()),
            "region": pa.array([f"r{i % 3}" for i in uid], pa.string()),
            "v": pa.array(values, arrow_type),
        }
    )
    if path.suffix == ".parquet":
        pq.write_table(table, path)
    else:
        frame = table.to_pandas()
        if kind == "int":
            frame["v"] = frame["v"].astype("Int64")
        frame.to_csv(path, index=False)


def _outcome(tmp_path, monkeypatch, capsys, kind, suffix, with_target, extra=()):
    """Register the world's file as its owner, then run the query as analyst."""
    world = tmp_path / f"{kind}{suffix}{with_target}"
    world.mkdir()
    path = world / f"t{suffix}"
    _write(path, kind, with_target)
    monkeypatch.setenv("DPX_REGISTRY", str(world / "reg"))
    add = ["dataset", "add", "d", "--table", f"t={path}", "--uid", "uid", "--epsilon", "100",
           "--delta", "1e-3"]  # fmt: skip
    assert run_dpx(capsys, monkeypatch, add, "owner")[0] == 0
    query = COLUMNS[kind][2]
    return run_dpx(capsys, monkeypatch, ["sql", "--dataset", "d", "--query", query, *extra],
                   "analyst")  # fmt: skip


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
@pytest.mark.parametrize("kind", sorted(COLUMNS))
def test_a_missing_value_decides_nothing(tmp_path, monkeypatch, capsys, kind, suffix):
    """Neighbours differing in one person whose value is missing: the same exit code, and a
    release on both sides (never refused on one side only, never failing after the charge)."""
    absent = _outcome(tmp_path, monkeypatch, capsys, kind, suffix, False)
    present = _outcome(tmp_path, monkeypatch, capsys, kind, suffix, True)
    assert absent[0] == present[0] == 0, (absent[2], present[2])


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_the_free_dry_run_is_identical_on_neighbours(tmp_path, monkeypatch, capsys, suffix):
    """The dry run charges nothing, so anything in it that moved with one person's row would
    be a free bit: it shows the same limit, decided from the same declared facts, on both."""
    outs = []
    for with_target in (False, True):
        code, out, err = _outcome(tmp_path, monkeypatch, capsys, "int", suffix, with_target,
                                  ("--dry-run", "--json"))  # fmt: skip
        assert code == 0, err
        info = json.loads(out)
        assert "table_bytes" not in json.dumps(info)
        outs.append((info["time_limit"], info["epsilon"], info["delta"], info["budget_split"]))
    assert outs[0] == outs[1]


def test_an_analyst_cannot_choose_the_engine_limits(tmp_path, monkeypatch, capsys):
    """A memory or time limit the analyst chose could make one person's row the difference
    between a release and a failure after the charge: both are the owner's."""
    for extra in (("--memory-limit", "64MB"), ("--timeout", "5")):
        root = tmp_path / extra[0].strip("-")
        root.mkdir()
        code, _, err = _outcome(root, monkeypatch, capsys, "int", ".csv", True, extra)
        assert code == 2 and "owner's" in err and err.count("\n") == 1
