"""A table-driven hostile CLI over every subcommand (issue 17 items 4 and 5).

Each invocation must exit 2 with exactly one stderr line (`dpx: error: ...`, no traceback,
nothing on stdout) or succeed completely; nothing partial is ever left. Two parts:

1. every value-taking option of every subcommand (walked from `core.cli.build_parser`) gets the
   hostile values of its kind — non-finite and huge numbers, negative seeds, 5,000-byte paths
   and 300-byte names, FIFOs, devices, directories and `/dev/full` where a file is expected —
   and must refuse them while parsing, naming the option;
2. real runs of each tool against hostile inputs and outputs: CSVs in other encodings and
   separators, binary and empty files, list columns, read-only and full output directories,
   a read-only registry directory, and stdout on `/dev/full`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import threading
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core import cliargs
from core.cli import main
from tests.faults.conftest import (
    BBOX,
    SQL_QUERY,
    assert_one_error_line,
    fill_up,
    run_dpx,
    temporaries,
    tmpfs,
    write_people,
)
from tests.faults.test_parser_validators import value_options

# -- part 1: every option, at the parser ---------------------------------------------------------


@contextlib.contextmanager
def fifo_guard(path: Path):
    """Fail (instead of hanging) if the command opens the FIFO: a helper thread waits to open
    its write end, which only succeeds once a reader opened it."""
    opened = threading.Event()

    def writer():
        with open(path, "wb"):  # blocks until someone opens the FIFO for reading
            opened.set()

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        yield
    finally:
        was_opened = opened.is_set()
        if not was_opened:  # release the helper: open the read end ourselves
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            thread.join()
            os.close(fd)
        thread.join()
        assert not was_opened, f"the command opened the FIFO {path}"


def hostile_values(validator, where: Path) -> list[tuple[str, str]]:
    """(label, value) pairs that `validator` must refuse."""
    (where / "a-file.txt").write_text("x")
    (where / "a-dir").mkdir(exist_ok=True)
    long_path = str(where) + "/" + "d/" * 2500 + "x.csv"
    long_name = str(where / ("n" * 300 + ".csv"))
    fifo = where / "fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    numbers = [("nan", "nan"), ("inf", "inf"), ("-inf", "-inf"), ("1e308", "1e308"),
               ("-1e308", "-1e308"), ("-1", "-1"), ("5000 digits", "9" * 5000),
               ("1e-5000", "1e-5000"), ("empty", "")]  # fmt: skip
    kind = type(validator)
    if kind in (cliargs.Real, cliargs.Integer, cliargs.ReleaseId):
        return [(label, v) for label, v in numbers if not _accepts(validator, v)]
    if kind is cliargs.Rational:
        return [("1e-5000", "1e-5000"), ("nan", "nan"), ("1/0", "1/0"), ("huge", "9" * 5000)]
    if kind is cliargs.InputFile:
        return [("FIFO", str(fifo)), ("directory", str(where / "a-dir")),
                ("device", "/dev/zero"), ("5000-byte path", long_path),
                ("300-byte name", long_name)]  # fmt: skip
    if kind is cliargs.TableSpec:
        return [(label, "t=" + value) for label, value in hostile_values(cliargs.INPUT_FILE, where)]
    if kind is cliargs.OutputFile:
        out = [("/dev/full", "<dev_full>"), ("directory", str(where / "a-dir")),
               ("FIFO", str(fifo)), ("path through a file", str(where / "a-file.txt" / "o.csv")),
               ("5000-byte path", long_path), ("300-byte name", long_name)]  # fmt: skip
        if not validator.missing_parents:
            out.append(("missing directory", str(where / "missing" / "o.csv")))
        return out
    if kind is cliargs.Directory:
        return [("a file", str(where / "a-file.txt")), ("5000-byte path", long_path)]
    if kind is cliargs.Text:
        bad = [("too long", "x" * (validator.limit + 1))]
        return [*bad, ("newline", "a\nb")] if validator.name else bad
    if kind is cliargs.NameList:
        return [("empty", ""), ("only commas", ",,"), ("empty item", "a,,b"), ("twice", "a,a")]
    if kind is cliargs.BBox:
        return [("non-finite", "nan,1,2,3"), ("huge", "1e400,1,2,3"), ("three", "1,2,3")]
    if kind is cliargs.MemorySize:
        return [("no unit", "512"), ("tiny", "1KB"), ("nan", "nanGB"), ("huge", "9" * 5000 + "GB")]
    if kind is cliargs.Fractions:
        return [("zero", "0"), ("nan", "nan"), ("above one", "0.5,2")]
    if kind is cliargs.Freqs:
        return [("huge count", "a=" + "9" * 5000), ("fractional", "a=1.5")]
    raise AssertionError(f"no hostile values for {kind.__name__}: add them here")


def _accepts(validator, text: str) -> bool:
    try:
        validator(text)
    except argparse.ArgumentTypeError:
        return False
    return True


def _argv(command: str, action: argparse.Action, value: str) -> list[str]:
    words = command.split()[1:]
    if action.option_strings:
        return [*words, f"{action.option_strings[-1]}={value}"]
    return [*words, "--", value]  # a positional, even when it starts with "-"


def _label(action: argparse.Action) -> str:
    if action.option_strings:
        return "/".join(action.option_strings)
    return action.metavar or action.dest


def test_every_option_of_every_subcommand_refuses_hostile_values(tmp_path, capsys, dev_full):
    checked = 0
    for command, action in value_options():
        if not isinstance(action.type, cliargs.Validator):
            continue  # choices= only: argparse refuses anything else
        for label, value in hostile_values(action.type, tmp_path):
            value = str(dev_full) if value == "<dev_full>" else value
            argv = _argv(command, action, value)
            guard = fifo_guard(tmp_path / "fifo") if "fifo" in value else contextlib.nullcontext()
            with guard:
                code = main(argv)
            out = capsys.readouterr()
            context = f"{command} {_label(action)} <{label}>"
            assert code == 2, context
            assert_one_error_line(out.err, context)
            assert f"argument {_label(action)}" in out.err, (context, out.err)
            assert out.out == ""
            checked += 1
    assert checked > 300
    assert os.path.exists(dev_full) and not os.path.isfile(dev_full)
    expected = {"a-dir", "a-file.txt", "fifo"} | (
        {dev_full.name} if dev_full.parent == tmp_path else set()
    )
    assert {p.name for p in tmp_path.iterdir()} == expected  # nothing was written


# -- part 2: real runs against hostile inputs and outputs ----------------------------------------

PEOPLE_ROWS = 400


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    """The same table in hostile encodings and forms (columns uid, lat, lon, sa)."""
    d = tmp_path_factory.mktemp("hostile-inputs")
    base = write_people(d / "people.csv", n=PEOPLE_ROWS)
    frame = pd.read_csv(base)
    frame["sa"] = frame["sa"].map({"a": "é", "b": "ü", "c": "ß", "d": "ø"})
    text = frame.to_csv(index=False)
    files = {"utf-8": base}

    def put(name: str, data: bytes) -> None:
        (d / name).write_bytes(data)
        files[name] = d / name

    put("latin-1.csv", text.encode("latin-1"))
    put("utf-16.csv", text.encode("utf-16"))
    put("utf-8-bom.csv", text.encode("utf-8-sig"))
    put("semicolon.csv", frame.to_csv(index=False, sep=";").encode())
    put("tab.csv", frame.to_csv(index=False, sep="\t").encode())
    put("crlf.csv", text.replace("\n", "\r\n").encode())
    put("binary.csv", bytes(range(256)) * 40)
    put("nul-inside.csv", text.encode()[:500] + b"\0\0\0" + text.encode()[500:])
    put("empty.csv", b"")
    put("header-only.csv", b"uid,lat,lon,sa\n")
    put("non-finite.csv", b"uid,lat,lon,sa\n1,nan,-118.2,a\n2,inf,-118.2,b\n3,1e400,-118,c\n")
    nested = pa.table({"uid": list(range(50)), "lat": [[34.0]] * 50, "lon": [-118.2] * 50,
                       "sa": [["a", "b"]] * 50})  # fmt: skip
    pq.write_table(nested, d / "lists.parquet")
    files["lists.parquet"] = d / "lists.parquet"
    return files


def tool_runs(table: Path, out: Path) -> dict[str, tuple[list[str], list[Path]]]:
    """Each tool on `table`, writing under `out`: argv and the files a success must leave."""
    q = SQL_QUERY.format(eps=1)
    return {
        "htf": (["htf", str(table), BBOX, "--lat", "lat", "--lon", "lon", "--epsilon", "1",
                 "--out", str(out / "h.csv")], [out / "h.csv", out / "h.csv.json"]),
        "release": (["release", str(table), BBOX, "--lat", "lat", "--lon", "lon",
                     "--method", "ug", "--epsilon", "1", "--out", str(out / "r.geojson")],
                    [out / "r.geojson"]),
        "compare": (["compare", str(table), BBOX, "--lat", "lat", "--lon", "lon", "--epsilon",
                     "1", "--methods", "ug", "--queries", "20", "--reps", "1", "--json"], []),
        "balance": (["balance", str(table), "--sa", "sa", "--rho1", "1/3", "--rho2", "2/3",
                     "--perturb", "--out", str(out / "p.csv")],
                    [out / "p.csv", out / "p.metadata.json"]),
        "sql": (["sql", "--table", f"t={table}", "--uid", "uid", "--query", q, "--json"], []),
        "sql export": (["sql", "--table", f"t={table}", "--uid", "uid", "--query", q,
                        "--export-bigquery", str(out / "q.sql")], [out / "q.sql"]),
        "dataset add": (["dataset", "add", "x", "--table", f"t={table}", "--uid", "uid",
                         "--epsilon", "1"], []),
    }  # fmt: skip


def check_outcome(code: int, out, files: list[Path], outdir: Path, context: str) -> None:
    """Exit 2 with one line and nothing written, or exit 0 with every file whole."""
    assert code in (0, 2), (context, code)
    if code == 2:
        assert_one_error_line(out.err, context)
        assert out.out == "", context
        assert not any(f.exists() for f in files), f"{context}: partial output"
    else:
        for f in files:
            assert f.exists() and f.stat().st_size > 0, f"{context}: {f.name} missing"
            if f.suffix in (".json", ".geojson"):
                json.loads(f.read_text())
            elif f.suffix == ".csv":
                pd.read_csv(f)
    assert temporaries(outdir) == [], context


@pytest.mark.parametrize(
    "form",
    ["latin-1.csv", "utf-16.csv", "utf-8-bom.csv", "semicolon.csv", "tab.csv", "crlf.csv",
     "binary.csv", "nul-inside.csv", "empty.csv", "header-only.csv", "non-finite.csv",
     "lists.parquet"],
)  # fmt: skip
def test_every_tool_on_hostile_input_files(inputs, form, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DPX_REGISTRY", str(tmp_path / "reg"))
    for name, (argv, files) in tool_runs(inputs[form], tmp_path / "out").items():
        outdir = tmp_path / "out"
        outdir.mkdir(exist_ok=True)
        code = main(argv)
        check_outcome(code, capsys.readouterr(), files, outdir, f"{name} on {form}")
        for f in files:
            f.unlink(missing_ok=True)


def test_a_list_column_as_sensitive_attribute_is_refused_by_name(inputs, capsys, tmp_path):
    code = main(["balance", str(inputs["lists.parquet"]), "--sa", "sa", "--rho1", "1/3",
                 "--rho2", "2/3", "--registry", str(tmp_path / "reg")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "column 'sa'" in err
    assert_one_error_line(err, "balance on a list column")


def test_outputs_into_a_read_only_directory(inputs, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DPX_REGISTRY", str(tmp_path / "reg"))
    with tmpfs(tmp_path / "ro", "1m", read_only=True) as ro:
        runs = tool_runs(inputs["utf-8"], ro)
        runs["report"] = (["report", "1", "--out", str(ro / "r.html")], [ro / "r.html"])
        runs["backup"] = (["dataset", "backup", "--out", str(ro / "b.sqlite")], [ro / "b.sqlite"])
        main(runs["htf"][0][:-2])  # one recorded run, so that `report 1` has a release
        capsys.readouterr()
        for name, (argv, files) in runs.items():
            if not files:
                continue
            code = main(argv)
            out = capsys.readouterr()
            assert code == 2, name
            check_outcome(code, out, files, ro, f"{name} into a read-only directory")
            assert "Read-only file system" in out.err


def test_outputs_onto_a_full_file_system(inputs, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DPX_REGISTRY", str(tmp_path / "reg"))
    with tmpfs(tmp_path / "full", "256k") as full:
        runs = tool_runs(inputs["utf-8"], full)
        runs["report"] = (["report", "1", "--out", str(full / "r.html")], [full / "r.html"])
        runs["backup"] = (["dataset", "backup", "--out", str(full / "b.sqlite")],
                          [full / "b.sqlite"])  # fmt: skip
        main(runs["htf"][0][:-2])
        capsys.readouterr()
        filler = fill_up(full)
        for name, (argv, files) in runs.items():
            if not files:
                continue
            code = main(argv)
            out = capsys.readouterr()
            assert code == 2, name
            check_outcome(code, out, files, full, f"{name} onto a full file system")
            assert "No space left on device" in out.err
        filler.unlink()


def test_a_read_only_registry_directory(inputs, tmp_path, capsys):
    with tmpfs(tmp_path / "ro", "1m", read_only=True) as ro:
        for argv in (["dataset", "list"], ["dataset", "show", "d"],
                     ["dataset", "add", "d", "--table", f"t={inputs['utf-8']}", "--epsilon", "1"],
                     ["htf", "--dataset", "d", "--max-points-per-person", "1", BBOX, "--epsilon", "1"]):  # fmt: skip
            code = main([*argv, "--registry", str(ro / "reg")])
            out = capsys.readouterr()
            assert code == 2, argv
            assert_one_error_line(out.err, " ".join(argv))


def test_stdout_on_dev_full_is_a_failure_not_a_success(inputs, dev_full, tmp_path):
    for argv in (["demos", "--json"],
                 ["htf", str(inputs["utf-8"]), BBOX, "--epsilon", "1", "--json",
                  "--registry", str(tmp_path / "reg")]):  # fmt: skip
        with open(dev_full, "w") as sink:
            done = run_dpx(*argv, stdout=sink)
        assert done.returncode == 2, (argv, done.stderr)
        assert_one_error_line(done.stderr, " ".join(argv))
        assert "No space left on device" in done.stderr
