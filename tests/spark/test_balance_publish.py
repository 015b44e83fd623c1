"""`dpx balance --engine spark --perturb`: records drawn into sub-tables and perturbed on Spark
with draws derived from a secret key (core/balancing/spark_publish.py). Checked like an auditor
would: the plan and the mechanism objects are the in-memory path's (same seed: same noisy plan,
same metadata); every record appears once, in a sub-table whose domain holds its true value; the
keep rate is p_i + (1 - p_i)/m_i; with the SA alone the rows are the plan's slots; the same seed
repeats, secure runs differ, a seeded file says so in its name and header."""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.balancing.names import SEEDED_MARKER
from core.cli import main

VALUES = {"flu": 6000, "cold": 9000, "hiv": 1500, "tb": 900, "covid": 2600}


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    rng = np.random.default_rng(4)
    sa = np.repeat(list(VALUES), list(VALUES.values()))
    rng.shuffle(sa)
    path = tmp_path_factory.mktemp("pp") / "t.csv"
    frame = pd.DataFrame(
        {"rid": np.arange(sa.size), "sa": sa, "name": [f"n{i}" for i in range(sa.size)]}
    )
    frame.to_csv(path, index=False)
    return path, frame


def _publish_memory(path, out, *extra):
    argv = ["balance", str(path), "--sa", "sa", "--rho1", "1/5", "--rho2", "3/5", "--perturb",
            "--out", str(out), "--json", *extra]  # fmt: skip
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        assert main(argv) == 0
    return json.loads(stdout.getvalue())


def _publish(path, out, *extra):
    argv = ["balance", str(path), "--sa", "sa", "--rho1", "1/5", "--rho2", "3/5", "--perturb",
            "--out", str(out), "--engine", "spark", "--json", *extra]  # fmt: skip
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(argv)
    assert code == 0, stderr.getvalue()
    return json.loads(stdout.getvalue())


@pytest.fixture(scope="module")
def seeded(spark, table, tmp_path_factory):
    path, frame = table
    out = tmp_path_factory.mktemp("out") / "pub.csv"
    result = _publish(path, out, "--seed", "3", "--columns", "rid")
    published = pd.read_csv(result["published"]["out"])
    metadata = json.loads(Path(result["published"]["metadata"]).read_text())
    return result, published, metadata


def test_every_record_in_a_subtable_holding_its_value(seeded, table):
    result, published, metadata = seeded
    _, frame = table
    assert list(published.columns) == [SEEDED_MARKER, "rid", "sa", "subtable"]
    assert sorted(published["rid"]) == list(range(len(frame)))  # every record once
    truth = frame.set_index("rid")["sa"]
    joined = published.assign(true=truth.loc[published["rid"]].to_numpy())
    subs = metadata["subtables"]
    for s in subs:
        rows = joined[joined["subtable"] == s["id"]]
        assert set(rows["true"]) <= set(s["domain"]) and set(rows["sa"]) <= set(s["domain"])
        # each record draws its sub-table on its own: rows near the planned (noisy) size
        assert abs(len(rows) - s["size"]) <= 6 * math.sqrt(s["size"]) + 10
    assert len(subs) > 1  # the plan really partitions


def test_same_plan_and_mechanisms_as_in_memory(seeded, table, tmp_path):
    """The Spark path records the in-memory path's mechanism objects: same seed, same noisy
    plan, same rows in the metadata (kind, epsilon, scale, retention, posterior bound)."""
    result, published, metadata = seeded
    path, _ = table
    memory = _publish_memory(path, tmp_path / "mem.csv", "--seed", "3", "--columns", "rid")
    mem_meta = json.loads(Path(memory["published"]["metadata"]).read_text())
    assert metadata["privacy"] == mem_meta["privacy"]
    assert metadata["subtables"] == mem_meta["subtables"]
    assert metadata["plan_counts"] == mem_meta["plan_counts"]
    kinds = [m["kind"] for m in metadata["privacy"]["mechanisms"]]
    n = len(metadata["subtables"])  # values read from the data: the threshold lists them
    assert (
        kinds
        == ["discrete Laplace", "noisy-threshold partition selection"] + ["PP randomization"] * n
    )


def test_sa_alone_publishes_the_plan_slots(spark, table, tmp_path):
    path, _ = table
    result = _publish(path, tmp_path / "slots.csv", "--seed", "5")
    published = pd.read_csv(result["published"]["out"])
    metadata = json.loads(Path(result["published"]["metadata"]).read_text())
    assert list(published.columns) == [SEEDED_MARKER, "sa", "subtable"]
    sizes = published["subtable"].value_counts().sort_index().tolist()
    assert sizes == [s["size"] for s in metadata["subtables"]]
    for s in metadata["subtables"]:
        assert set(published.loc[published["subtable"] == s["id"], "sa"]) <= set(s["domain"])


def test_keep_rate_is_p_plus_self_pick(seeded, table):
    result, published, metadata = seeded
    _, frame = table
    truth = frame.set_index("rid")["sa"]
    kept_same = published["sa"].to_numpy() == truth.loc[published["rid"]].to_numpy()
    for s in metadata["subtables"]:
        mask = (published["subtable"] == s["id"]).to_numpy()
        num, _, den = s["p"].partition("/")
        p = int(num) / int(den or 1)
        rate = p + (1 - p) / s["m"]
        n = int(mask.sum())
        sd = math.sqrt(rate * (1 - rate) / n)
        assert abs(kept_same[mask].mean() - rate) <= 5 * sd + 1e-12, s


def test_same_seed_same_file_secure_runs_differ(spark, seeded, table, tmp_path):
    result, published, metadata = seeded
    path, _ = table
    again = _publish(path, tmp_path / "again.csv", "--seed", "3", "--columns", "rid")
    assert pd.read_csv(again["published"]["out"]).equals(published)
    assert "SEEDED" in again["published"]["out"]
    one = _publish(path, tmp_path / "s1.csv", "--columns", "rid")
    two = _publish(path, tmp_path / "s2.csv", "--columns", "rid")
    first, second = (pd.read_csv(r["published"]["out"]) for r in (one, two))
    assert not first.equals(second)
    text = Path(one["published"]["metadata"]).read_text()
    assert "seed" not in json.loads(text)["noise"] and json.loads(text)["noise"]["mode"] == "secure"
    assert json.loads(text)["engine"]["name"] == "spark"


def test_perturb_without_out_is_refused_before_spark_work(spark, table, capsys):
    path, _ = table
    code = main(["balance", str(path), "--sa", "sa", "--rho1", "1/5", "--rho2", "3/5",
                 "--perturb", "--engine", "spark"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "--out" in err and "Traceback" not in err


def test_list_column_and_continuous_column_are_refused_on_spark(spark, tmp_path):
    from core.balancing.spark_pass import count_values, read_table
    from core.errors import InputError

    path = tmp_path / "t.parquet"
    rng = np.random.default_rng(1)
    pd.DataFrame({"tags": [[1, 2], [3]] * 1000, "lon": rng.uniform(-93.3, -93.2, 2000)}).to_parquet(
        path
    )
    frame = read_table(spark, path)
    with pytest.raises(InputError, match="'tags' holds lists or structs"):
        count_values(frame, "tags")
    with pytest.raises(InputError, match="'lon' looks continuous"):
        count_values(frame, "lon")
