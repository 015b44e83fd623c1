"""The streamed PP publication of a file (`core.balancing.stream_publish`): the same release as
the in-memory `publish`, read by DuckDB where the file lies and written in chunks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.balancing.file_scan import file_value_counts
from core.balancing.names import SEEDED_MARKER
from core.balancing.publish import publish
from core.balancing.records import MISSING_LABEL, encode_sa
from core.balancing.release import ReleaseSettings
from core.balancing.stream_publish import publish_file
from core.cli import main
from core.errors import InputError
from core.privacy import Accountant, Noise
from core.spatial.scan import ScanUnavailable

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ReleaseSettings(Fraction(1, 5), Fraction(1, 2), accept_fallback=True)


def records(n: int, values: int = 12, seed: int = 3) -> pd.DataFrame:
    """n records: a running id, an SA with skewed weights (v00 most frequent) and an age."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, values + 1)
    sa = np.array([f"v{i:02d}" for i in range(values)])[
        rng.choice(values, size=n, p=weights / weights.sum())
    ]
    return pd.DataFrame({"rid": np.arange(n), "sa": sa, "age": rng.integers(18, 90, n)})


def accountant(settings: ReleaseSettings, seed: int | None) -> Accountant:
    return Accountant(Noise.from_seed(seed), settings.cost, settings.claim)


def stream(path, columns, seed=1, chunk_rows=1 << 20, settings=SETTINGS, out=None):
    out = out or Path(path).with_name("published.csv")
    acc = accountant(settings, seed)
    filed = publish_file(path, "sa", columns, settings, acc, out, chunk_rows=chunk_rows)
    return filed, pd.read_csv(out, keep_default_na=False), acc


@pytest.fixture
def table_file(tmp_path):
    path = tmp_path / "records.parquet"
    records(20_000).to_parquet(path)
    return path


def test_the_plan_and_metadata_are_the_in_memory_ones_for_the_same_seed(table_file):
    """Both paths draw the plan first from the same counts: the same seed gives the same noisy
    plan, sub-tables and mechanisms."""
    df = pd.read_parquet(table_file)
    acc = accountant(SETTINGS, 11)
    pub = publish(df, "sa", ["sa", "age"], SETTINGS, acc)
    filed, table, acc_stream = stream(table_file, ["sa", "age"], seed=11)
    assert filed.metadata == pub.metadata
    assert [m.label for m in acc_stream.mechanisms] == [m.label for m in acc.mechanisms]
    assert filed.rows == len(table) == len(df)
    assert list(table.columns) == [SEEDED_MARKER, *pub.table.columns]


def test_every_record_is_published_once_whatever_the_chunk_size(table_file):
    df = pd.read_parquet(table_file)
    sizes = {}
    for chunk_rows in (1, 997, len(df), len(df) + 1):
        if chunk_rows == 1:  # one record per chunk: a small file, every boundary crossed
            small = table_file.with_name("small.parquet")
            df.iloc[:600].to_parquet(small)
            _, table, _ = stream(small, ["rid", "sa", "age"], chunk_rows=1)
            assert sorted(table["rid"]) == list(range(600))
            continue
        filed, table, _ = stream(table_file, ["rid", "sa", "age"], chunk_rows=chunk_rows)
        assert sorted(table["rid"]) == list(range(len(df)))  # each record once
        merged = table.merge(df, on="rid", suffixes=("", "_in"))
        assert (merged["age"] == merged["age_in"]).all()  # declared columns travel unchanged
        domains = {s["id"]: set(s["domain"]) for s in filed.metadata["subtables"]}
        assert all(v in domains[g] for v, g in zip(table["sa"], table["subtable"], strict=True))
        sizes[chunk_rows] = filed.metadata["subtables"]
    assert len({json.dumps(s) for s in sizes.values()}) == 1  # the plan does not depend on it


def test_seeded_runs_give_the_same_bytes_and_secure_runs_do_not(table_file, tmp_path):
    texts = []
    for run in range(2):
        out = tmp_path / f"p{run}.csv"
        stream(table_file, ["sa", "age"], seed=5, chunk_rows=4096, out=out)
        texts.append(out.read_bytes())
    assert texts[0] == texts[1]
    secure = [
        stream(table_file, ["sa", "age"], seed=None, out=tmp_path / f"s{r}.csv")[1]
        for r in range(2)
    ]
    assert not secure[0].equals(secure[1])


def test_csv_and_parquet_inputs_publish_the_same_bytes(table_file, tmp_path):
    csv_path = tmp_path / "records.csv"
    pd.read_parquet(table_file).to_csv(csv_path, index=False)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    stream(table_file, ["sa", "age"], seed=9, chunk_rows=3000, out=a)
    stream(csv_path, ["sa", "age"], seed=9, chunk_rows=3000, out=b)
    assert a.read_bytes() == b.read_bytes()


def test_rows_have_the_stated_distribution(tmp_path):
    """Per sub-table, a record keeps its value with p_i + (1 - p_i)/m_i, and a record of value
    x lands in sub-table i with probability s_i(x)/c~(x) (the plan's slots): checked on 120,000
    records crossing many chunks, |z| < 5 for every cell (a correct implementation fails with
    probability < 1e-4 over all cells; no perturbation, or p_i of another sub-table, fails)."""
    path = tmp_path / "r.parquet"
    df = records(120_000, values=8, seed=4)
    df.to_parquet(path)
    filed, table, _ = stream(path, ["rid", "sa"], seed=21, chunk_rows=10_007)
    merged = table.merge(df[["rid", "sa"]], on="rid", suffixes=("", "_in"))
    subtables = {s["id"]: s for s in filed.metadata["subtables"]}
    assert len(subtables) >= 2
    for sid, s in subtables.items():
        rows = merged[merged["subtable"] == sid]
        p = Fraction(s["p"])
        expected = float(p + (1 - p) / s["m"])
        kept = float((rows["sa"] == rows["sa_in"]).mean())
        sd = (expected * (1 - expected) / len(rows)) ** 0.5
        assert abs(kept - expected) < 5 * sd, (sid, kept, expected)
    slots = {}
    for sid, s in subtables.items():
        for value, count in zip(s["domain"], _slot_counts(filed, sid), strict=True):
            slots.setdefault(value, {})[sid] = count
    for value, per_sub in slots.items():
        mine = merged[merged["sa_in"] == value]
        total = sum(per_sub.values())
        for sid, count in per_sub.items():
            expected = count / total
            got = float((mine["subtable"] == sid).mean())
            sd = max((expected * (1 - expected) / len(mine)) ** 0.5, 1e-12)
            assert abs(got - expected) < 5 * sd + 1e-12, (value, sid, got, expected)


def _slot_counts(filed, sid: int) -> list[int]:
    sub = filed.release.subtables[sid - 1]
    return list(sub.counts.values())


def test_the_published_order_says_nothing_about_the_input_order(tmp_path):
    """Rank correlation of published position and input position ~ 0 (|r| < 5/sqrt(n)), and the
    first chunk's records are spread over the whole output (mean position ~ n/2)."""
    path = tmp_path / "r.parquet"
    n = 50_000
    records(n).to_parquet(path)
    _, table, _ = stream(path, ["rid", "sa"], seed=None, chunk_rows=5_000)
    rid = table["rid"].to_numpy()
    r = np.corrcoef(np.arange(n), rid)[0, 1]  # ranks are the values themselves here
    assert abs(r) < 5 / n**0.5
    first_chunk = np.flatnonzero(rid < 5_000)
    sd = n / (12**0.5 * len(first_chunk) ** 0.5)
    assert abs(first_chunk.mean() - (n - 1) / 2) < 5 * sd


def test_sa_only_publication_is_the_plans_slots(table_file):
    filed, table, _ = stream(table_file, ["sa"], seed=2, chunk_rows=3_001)
    planned = sum(s["size"] for s in filed.metadata["subtables"])
    assert filed.rows == len(table) == planned
    assert filed.metadata["rows"] == "plan slots"
    sizes = table["subtable"].value_counts().to_dict()
    assert sizes == {s["id"]: s["size"] for s in filed.metadata["subtables"] if s["size"]}


def test_value_counts_in_the_engine_equal_the_loaded_counts(tmp_path):
    df = pd.DataFrame(
        {"sa": pd.array([1, 2, None, 2, 3, 1, None, 3, 3], dtype="Int64").astype("float64")}
    )
    path = tmp_path / "t.parquet"
    df.to_parquet(path)
    for missing in ("drop", "category"):
        got = file_value_counts(path, "sa", missing, tmp_path).counts()
        assert got == encode_sa(df["sa"], missing=missing).counts()
    assert MISSING_LABEL in file_value_counts(path, "sa", "category", tmp_path).counts()
    with pytest.raises(InputError, match="has missing values"):
        file_value_counts(path, "sa", "error", tmp_path)
    many = tmp_path / "many.parquet"
    pd.DataFrame({"sa": np.arange(5000)}).to_parquet(many)
    with pytest.raises(InputError, match="looks continuous"):
        file_value_counts(many, "sa", "error", tmp_path)


def test_empty_file_is_refused_in_one_line(tmp_path):
    path = tmp_path / "empty.parquet"
    pd.DataFrame({"sa": pd.Series([], dtype=str)}).to_parquet(path)
    with pytest.raises(InputError, match="the table is empty"):
        stream(path, ["sa"])


def _cli(path, out, *extra):
    return [
        "balance", str(path), "--sa", "sa", "--rho1", "1/5", "--rho2", "1/2", "--perturb",
        "--accept-fallback", "--out", str(out), *extra,
    ]  # fmt: skip


def test_cli_missing_sa_column_and_nested_sa_exit_2_in_one_line(tmp_path, capsys):
    path = tmp_path / "r.parquet"
    records(100).to_parquet(path)
    out = tmp_path / "out" / "p.csv"
    argv = _cli(path, out)
    argv[argv.index("sa")] = "nope"
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "'nope'" in err and len(err.splitlines()) == 1
    nested = tmp_path / "nested.parquet"
    pd.DataFrame({"sa": [[1, 2], [3]] * 50}).to_parquet(nested)
    assert main(_cli(nested, out)) == 2
    err = capsys.readouterr().err.strip()
    assert "lists" in err and len(err.splitlines()) == 1
    empty = tmp_path / "empty.csv"
    empty.write_text("rid,sa,age\n")
    assert main(_cli(empty, out)) == 2
    err = capsys.readouterr().err.strip()
    assert "the table is empty" in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_cli_failure_while_writing_leaves_no_file(tmp_path, capsys, monkeypatch):
    """A failure after the plan was drawn (here: DuckDB failing on the second chunk, as on a
    full disk) is one line, exit 2, and neither the CSV, its metadata nor a temporary stays."""
    import duckdb

    from core.balancing import stream_publish

    path = tmp_path / "r.parquet"
    records(30_000).to_parquet(path)
    calls = []
    original = stream_publish._Stage._append

    def failing(self, *args):
        calls.append(1)
        if len(calls) == 2:
            raise duckdb.IOException("No space left on device")
        return original(self, *args)

    defaults = stream_publish.publish_file.__defaults__  # (chunk_rows, schema)
    monkeypatch.setattr(stream_publish.publish_file, "__defaults__", (10_000, *defaults[1:]))
    monkeypatch.setattr(stream_publish._Stage, "_append", failing)
    out_dir = tmp_path / "out"
    assert main(_cli(path, out_dir / "p.csv", "--columns", "age")) == 2
    err = capsys.readouterr().err.strip()
    assert "No space left on device" in err and "free space" in err
    assert len(err.splitlines()) == 1
    assert len(calls) == 2
    assert list(out_dir.iterdir()) == []


def test_cli_killed_while_publishing_leaves_no_partial_file(tmp_path):
    """SIGKILL once the staged temporary exists (the publication is under way): the published
    path never appears; a later run cleans the stale temporary and publishes."""
    path = tmp_path / "r.parquet"
    records(2_000_000, seed=8).to_parquet(path)
    out_dir = tmp_path / "out"
    out = out_dir / "p.csv"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DPX_REGISTRY": str(tmp_path / "reg")}
    code = "import sys; from core.cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *_cli(path, out, "--columns", "age")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while proc.poll() is None and not (
            out_dir.exists() and any(p.name != out.name for p in out_dir.iterdir())
        ):
            time.sleep(0.01)
        started = proc.poll() is None
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    assert started, "the publication ended before a temporary appeared"
    assert not out.exists() and not (out_dir / "p.metadata.json").exists()
    assert main(_cli(path, out, "--columns", "age")) == 0
    assert out.exists() and sorted(p.name for p in out_dir.iterdir()) == [
        "p.csv", "p.metadata.json"
    ]  # fmt: skip


def test_cli_streams_a_file_and_states_the_same_claim(tmp_path, capsys):
    path = tmp_path / "r.parquet"
    records(5_000).to_parquet(path)
    out = tmp_path / "p.csv"
    assert main([*_cli(path, out, "--columns", "age", "--seed", "4"), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    written = Path(result["published"]["out"])
    table = pd.read_csv(written)
    assert list(table.columns) == ["SEEDED-demo-not-private", "sa", "age", "subtable"]
    assert len(table) == 5_000
    meta = json.loads(Path(result["published"]["metadata"]).read_text())
    assert meta["published_columns"] == ["sa", "age", "subtable"]
    assert result["privacy"] == meta["privacy"]


def test_person_datasets_are_published_in_memory_and_others_streamed(
    tmp_path, registry_dir, capsys, monkeypatch
):
    """One record per person needs each person's records together: a dataset with a unit
    column goes to the in-memory path (`core.balancing.persons`), one without is streamed."""
    from core.balancing import stream_publish

    streamed = []
    original = stream_publish.publish_file
    monkeypatch.setattr(
        stream_publish,
        "publish_file",
        lambda *a, **k: streamed.append(1) or original(*a, **k),
    )
    frame = records(3_000).assign(person=lambda f: f["rid"] // 3)
    frame.to_csv(tmp_path / "t.csv", index=False)
    for name, uid in (("people", ["--uid", "person"]), ("rows", ["--row-is-unit"])):
        argv = ["dataset", "add", name, "--table", f"t={tmp_path / 't.csv'}", *uid,
                "--epsilon", "5", "--delta", "1e-3", "--pp-columns", "age"]  # fmt: skip
        assert main(argv) == 0, capsys.readouterr().err
        out = tmp_path / f"{name}.csv"
        argv = ["balance", "--dataset", name, "--sa", "sa", "--rho1", "1/5", "--rho2", "1/2",
                "--perturb", "--accept-fallback", "--columns", "age", "--out", str(out)]  # fmt: skip
        assert main(argv) == 0, capsys.readouterr().err
        published = pd.read_csv(out)
        assert len(published) == (1_000 if name == "people" else 3_000)
        assert streamed == ([] if name == "people" else [1])


def test_a_csv_cell_the_engine_cannot_parse_is_found_before_any_draw(tmp_path, capsys):
    """DuckDB types a CSV column from a sample: a text cell far below it makes the engine fail.
    That happens in the counting pass (every used column is read there), before the plan is
    drawn, so the file is loaded by pandas instead and published whole."""
    rng = np.random.default_rng(2)
    rows = [f"v{rng.integers(0, 12)},{rng.integers(18, 90)}" for _ in range(60_000)]
    path = tmp_path / "late.csv"
    path.write_text("sa,age\n" + "\n".join([*rows, "v1,unknown"]) + "\n")
    with pytest.raises(ScanUnavailable):
        stream(path, ["sa", "age"])
    out = tmp_path / "p.csv"
    assert main(_cli(path, out, "--columns", "age")) == 0, capsys.readouterr().err
    published = pd.read_csv(out, dtype=str)
    assert len(published) == 60_001 and (published["age"] == "unknown").sum() == 1
