"""`dpx balance` contract tests (the issue's CLI contract, exactly)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.balancing.names import SEEDED_MARKER, published_name
from core.cli import main
from core.privacy import Noise

FIG9_FREQS = "x1=12,x2=8,x3=6,x4=5,x5=4,x6=3,x7=1,x8=1,x9=1,x10=1"


def run_json(capsys, *argv) -> dict:
    code = main(["balance", *argv, "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def test_freqs_reproduces_example_6(capsys):
    out = run_json(capsys, "--freqs", FIG9_FREQS, "--rho1", "1/3", "--rho2", "2/3")
    assert (out["beta"], out["beta_prime"], out["f_max"]) == (3, 3, 12)
    assert out["sa_prime"] == [f"x{i}" for i in range(1, 11)]
    assert out["t_double_prime"] == {}
    its = out["iterations"]
    assert [it["t0_size"] for it in its] == [42, 24, 12, 6, 3]
    assert [it["h"] for it in its] == [6, 4, 2, 1, 1]
    assert [it["phi"] for it in its] == ["8", "5", "3", "1", "1"]
    assert [it["branch"] for it in its] == ["h=fb"] * 5
    assert [(it["f1"], it["f_beta"], it["f_beta_plus_1"]) for it in its] == [
        (12, 6, 5), (6, 4, 3), (3, 2, 1), (1, 1, 1), (1, 1, 0),
    ]  # fmt: skip
    assert its[3]["order"] == ["x6", "x4", "x7", "x8", "x9", "x10"]
    assert its[3]["group"] == {"x6": 1, "x4": 1, "x7": 1}
    assert [it["f1_value"] for it in its] == ["x1", "x1", "x6", "x6", "x8"]
    assert out["quotas"] == [0] * 5 and out["residue"] == 0
    assert out["groups"][0] == {"x1": 6, "x2": 6, "x3": 6}
    assert len(out["groups"]) == 5
    for s in out["subtables"]:
        assert (s["m"], s["rho1_i"], s["gamma"], s["p"], s["worst_posterior"]) == (
            3, "1/3", "4", "1/2", "2/3",
        )  # fmt: skip
    assert [s["size"] for s in out["subtables"]] == [18, 12, 6, 3, 3]
    assert out["whole_table"]["p"] == "2/7"
    assert "refused" not in out


def test_freqs_example_7_decimal_rho(capsys):
    out = run_json(capsys, "--freqs", FIG9_FREQS, "--rho1", "0.25", "--rho2", "2/3")
    assert out["t_double_prime"] == {"x1": 12}
    assert (out["beta"], out["beta_prime"], out["f_max"]) == (5, 3, 8)
    assert out["quotas"] == [6, 3, 1, 1] and out["residue"] == 1
    assert [s["p"] for s in out["subtables"]] == ["27/47", "5/9", "5/9", "7/11"]
    assert out["groups"][3] == {"x1": 2, "x8": 1, "x9": 1, "x10": 1}
    assert out["whole_table"]["p"] == "3/7"
    assert out["iterations"][0]["order"][0] == "x2"  # T' only


def test_freqs_given_order_is_canonical(capsys):
    out = run_json(capsys, "--freqs", "b=2,a=2,c=1", "--rho1", "1/2", "--rho2", "3/4")
    assert out["iterations"][0]["order"] == ["b", "a", "c"]
    assert out["canonical_order"] == ["b", "a", "c"]


def test_refused_partition_says_so_and_describes_fallback(capsys):
    out = run_json(capsys, "--freqs", "a=6,b=5,c=1,d=1", "--rho1", "2/5", "--rho2", "2/3")
    assert out["status"] == "refused" and "g2" in out["refused"]
    assert out["fallback"]["p"] == "11/31"
    fallback = {k: v for k, v in out["fallback"].items() if k != "description"}
    assert out["subtables"] == [fallback]
    assert len(out["subtables"]) == 1 and out["subtables"][0]["m"] == 4
    assert [s["admissible"] for s in out["partition_subtables"]] == [True, False, True]


def test_beta_one_says_so(capsys):
    out = run_json(capsys, "--freqs", "a=5,b=1", "--rho1", "9/10", "--rho2", "19/20")
    assert out["status"] == "beta_one" and "beta = 1" in out["refused"]
    assert out["subtables"][0]["p"] == "7/12"


def test_merge_utility(capsys):
    out = run_json(
        capsys, "--freqs", FIG9_FREQS, "--rho1", "1/3", "--rho2", "2/3", "--merge", "utility"
    )
    assert len(out["subtables"]) == 4 and out["subtables"][3]["p"] == "3/5"
    assert "project design" in out["merge_label"]
    assert out["merge_steps"] == [{"merged": [4, 5], "jaccard": "0", "gain": "3/5"}]


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    values = np.repeat([f"x{i}" for i in range(1, 11)], [12, 8, 6, 5, 4, 3, 1, 1, 1, 1])
    df = pd.DataFrame({"id": range(42), "zip": rng.integers(100, 105, 42), "disease": values})
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    return path


def test_table_input_and_perturb(capsys, table, tmp_path):
    out_csv = tmp_path / "out" / "pub.csv"
    out = run_json(
        capsys, str(table), "--sa", "disease", "--rho1", "1/3", "--rho2", "2/3",
        "--perturb", "--out", str(out_csv), "--seed", "7", "--columns", "zip",
        "--categories", ",".join(f"x{i}" for i in range(1, 11)),
    )  # fmt: skip
    # a release prints its plan from noisy counts, labelled, with its claim
    assert out["plan"].startswith("release plan") and out["privacy"]["plan_epsilon"] == 1.0
    # seeded noise: the file name carries the marker, and no unmarked file is written
    seeded_csv = tmp_path / "out" / f"pub.{SEEDED_MARKER}.csv"
    assert out["published"]["out"] == str(seeded_csv) and not out_csv.exists()
    pub = pd.read_csv(seeded_csv)
    # ... and so does its header: the first column is the marker
    assert list(pub.columns) == [SEEDED_MARKER, "zip", "disease", "subtable"] and len(pub) == 42
    assert set(pub[SEEDED_MARKER]) == {"seeded"}
    meta = json.loads((tmp_path / "out" / f"pub.{SEEDED_MARKER}.metadata.json").read_text())
    assert meta["noise"]["mode"] == "seeded"
    assert out["published"]["noise"]["mode"] == "seeded"
    assert out["published"]["columns"] == ["zip", "disease", "subtable"]
    kinds = [m["kind"] for m in meta["privacy"]["mechanisms"]]  # declared categories: no δ
    assert kinds[0] == "discrete Laplace" and set(kinds[1:]) == {"PP randomization"}
    assert len(kinds) == 1 + len(meta["subtables"]) and meta["privacy"]["plan_delta"] == 0
    assert [m["size"] for m in meta["subtables"]] == [s["size"] for s in out["subtables"]]


def test_perturb_publishes_the_sa_alone_unless_columns_are_given(capsys, table, tmp_path):
    out = run_json(
        capsys, str(table), "--sa", "disease", "--rho1", "1/3", "--rho2", "2/3",
        "--perturb", "--out", str(tmp_path / "pub.csv"), "--categories",
        ",".join(f"x{i}" for i in range(1, 11)),
    )  # fmt: skip
    pub = pd.read_csv(out["published"]["out"])
    assert list(pub.columns) == ["disease", "subtable"]  # no "drop these": the SA only
    assert main(["balance", str(table), "--sa", "disease", "--rho1", "1/3", "--rho2", "2/3",
                 "--perturb", "--out", str(tmp_path / "p2.csv"), "--drop-columns", "id"]) == 2  # fmt: skip
    assert "replaced by --columns" in capsys.readouterr().err
    assert main(["balance", str(table), "--sa", "disease", "--rho1", "1/3", "--rho2", "2/3",
                 "--perturb", "--out", str(tmp_path / "p3.csv"), "--columns", "nope"]) == 2  # fmt: skip
    assert "'nope' not found" in capsys.readouterr().err
    assert not (tmp_path / "p2.csv").exists() and not (tmp_path / "p3.csv").exists()


def test_perturb_refused_exits_2_unless_fallback_accepted(capsys, tmp_path):
    # like spec T9 (a in T'', beta' = 1): g1 = {a, b} has rho1_i > rho2 = 1/2; with a large plan
    # epsilon the noisy counts stay close enough to be refused as well
    path = tmp_path / "t.csv"
    sa = list("a" * 600 + "b" * 500 + "c" * 100 + "d" * 100)
    pd.DataFrame({"age": range(len(sa)), "sa": sa}).to_csv(path, index=False)
    out_csv = tmp_path / "pub.csv"
    args = ["balance", str(path), "--sa", "sa", "--rho1", "2/5", "--rho2", "1/2",
            "--perturb", "--out", str(out_csv), "--seed", "1", "--plan-epsilon", "5"]  # fmt: skip
    assert main(args) == 2
    assert "refused" in capsys.readouterr().err
    assert not out_csv.exists() and not list(tmp_path.glob("pub*"))
    assert main([*args, "--accept-fallback", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["published"]["single_table_fallback"] is True
    assert set(pd.read_csv(out["published"]["out"])["subtable"]) == {1}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--freqs", "a=2,b=1", "--rho1", "2/3", "--rho2", "1/3"], "must be smaller"),
        (["--freqs", "a=2,b=1", "--rho1", "0", "--rho2", "1/3"], "outside"),
        (["--freqs", "a=2,b=1", "--rho1", "1/3", "--rho2", "1.5"], "outside"),
        (["--freqs", "a=3", "--rho1", "1/3", "--rho2", "2/3"], "single distinct value"),
        (["--freqs", "a=2,b=1", "--rho1", "x", "--rho2", "2/3"], "not a number"),
        (["--rho1", "1/3", "--rho2", "2/3"], "either a table"),
    ],
)
def test_bad_input_exit_2(capsys, argv, message):
    assert main(["balance", *argv]) == 2
    assert message in capsys.readouterr().err


def test_missing_sa_column_and_nan(capsys, tmp_path):
    path = tmp_path / "t.csv"
    pd.DataFrame({"age": range(5), "sa": ["a", "b", None, "a", "c"]}).to_csv(path, index=False)
    assert main(["balance", str(path), "--sa", "nope", "--rho1", "1/2", "--rho2", "3/4"]) == 2
    assert "'nope' is not in the table" in capsys.readouterr().err
    assert main(["balance", str(path), "--sa", "sa", "--rho1", "1/2", "--rho2", "3/4"]) == 2
    assert "missing values" in capsys.readouterr().err
    out = run_json(capsys, str(path), "--sa", "sa", "--rho1", "1/2", "--rho2", "3/4",
                   "--missing", "drop")  # fmt: skip
    assert sum(sum(g.values()) for g in out["groups"]) == 4


def test_text_output(capsys):
    assert main(["balance", "--freqs", FIG9_FREQS, "--rho1", "1/3", "--rho2", "2/3"]) == 0
    text = capsys.readouterr().out
    assert "beta = 3" in text and "whole table" in text


def test_shipped_figure9_csv_reproduces_example_6(capsys):
    out = run_json(
        capsys, "demo_data/pp/figure9.csv", "--sa", "SA", "--rho1", "1/3", "--rho2", "2/3"
    )
    assert [it["h"] for it in out["iterations"]] == [6, 4, 2, 1, 1]
    assert [s["p"] for s in out["subtables"]] == ["1/2"] * 5


def test_text_tables_keep_columns_apart_for_large_counts(capsys):
    """Counts in the millions (the issue: `g1        1327711  1/11`) stay in aligned columns."""
    freqs = ",".join(f"x{i}={1_327_711 - 1000 * i}" for i in range(1, 12))
    assert main(["balance", "--freqs", freqs, "--rho1", "1/3", "--rho2", "2/3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("sub-table"))
    table = [line for line in lines[start:] if line.startswith(("sub-table", "g"))]
    assert len(table) >= 2
    header = table[0]
    starts = [header.index(name) for name in ("n", "m", "rho1_i", "gamma", "p")]
    for line in table[1:]:
        for col in starts:  # every column starts where its header does, after a gap
            assert line[col - 2 : col] == "  " and line[col] != " ", line
    assert int(table[1].split()[1]) > 1_000_000  # g1 holds millions of records


def test_published_name_marks_seeded_files_only():
    assert published_name("a/pub.csv", Noise.seeded(1)) == Path(f"a/pub.{SEEDED_MARKER}.csv")
    marked = Path(f"pub.{SEEDED_MARKER}.csv")
    assert published_name(marked, Noise.seeded(1)) == marked  # never marked twice
    assert published_name("a/pub.csv", Noise.secure()) == Path("a/pub.csv")


def test_registered_dataset_publishes_only_declared_columns(capsys, registry_dir, tmp_path):
    """The owner's declaration on the dataset (--pp-columns) bounds --columns; the unit column is
    never published; the release charges the plan's mechanisms and records those that drew."""
    from core.registry import Registry

    rng = np.random.default_rng(2)
    n = 3000
    df = pd.DataFrame({
        "pid": [f"p{i}" for i in range(n)], "zip": rng.integers(100, 105, n),
        "age": rng.integers(20, 80, n), "sa": rng.choice(list("abcdefgh"), n),
    })  # fmt: skip
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    assert main(["dataset", "add", "t", "--table", f"t={path}", "--uid", "pid",
                 "--epsilon", "3", "--delta", "1e-5", "--pp-columns", "zip"]) == 0  # fmt: skip
    capsys.readouterr()
    base = ["balance", "--dataset", "t", "--sa", "sa", "--rho1", "1/5", "--rho2", "1/2",
            "--perturb", "--out"]  # fmt: skip
    assert main([*base, str(tmp_path / "a.csv"), "--columns", "age"]) == 2
    assert "'age' may not be published" in capsys.readouterr().err
    out = run_json(capsys, *base[1:], str(tmp_path / "b.csv"), "--columns", "zip")
    assert pd.read_csv(out["published"]["out"]).columns.tolist() == ["zip", "sa", "subtable"]
    (release,) = Registry(registry_dir).releases("t")
    assert release.epsilon == 1.0 and 0 < release.delta <= 1e-6
    assert [m.to_json() for m in release.mechanisms] == out["privacy"]["mechanisms"]
