"""`dpx dataset add --schema/--max-rows` and `dpx dataset schema` (issue 27 item 1): proposals
are shown with how to edit them; a schema file is validated in one line (exit 2, nothing
registered); edits are the owner's and recorded; analysts see the schema, never edit it."""

from __future__ import annotations

import json

import pytest

from core.cli import main
from core.registry import Registry


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "stops.csv"
    path.write_text("stop_id,race,precinct\n1,a,4\n2,b,5\n3,a,4\n")
    return path


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def add(capsys, reg, table, *extra):
    return run(
        capsys,
        ["dataset", "add", "stops", "--table", f"s={table}", "--uid", "stop_id", "--epsilon",
         "5", "--registry", str(reg), *extra],
    )  # fmt: skip


def schema_file(tmp_path, data, name="s.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


GOOD = {
    "columns": [
        {"name": "stop_id", "type": "integer", "nullable": False},
        {"name": "race", "type": "text", "max_length": 4, "categories": ["a", "b", "c"]},
        {"name": "precinct", "type": "integer", "bounds": [0, 99]},
    ],
    "max_rows": 100000,
}


def test_add_proposes_and_prints_every_schema_and_how_to_edit(capsys, tmp_path, table):
    code, out, _ = add(capsys, tmp_path / "r", table)
    assert code == 0
    assert "declared public facts" in out and "stop_id   integer" in out
    assert "proposed from what each file declares" in out and "dpx dataset schema stops" in out
    code, out, _ = add(capsys, tmp_path / "r2", table, "--json", "--max-rows", "s=5000000")
    info = json.loads(out)
    assert code == 0 and info["schema_proposed"] == ["s"]
    assert "proposed from what each file declares" in info["schema_note"]
    assert info["schemas"]["s"]["max_rows"] == 5000000
    assert [c["type"] for c in info["schemas"]["s"]["columns"]] == ["integer", "text", "integer"]
    assert Registry(tmp_path / "r2").dataset("stops").schema("s").max_rows == 5000000


def test_add_stores_a_given_schema_file(capsys, tmp_path, table):
    path = schema_file(tmp_path, GOOD)
    code, out, _ = add(capsys, tmp_path / "r", table, "--schema", f"s={path}", "--json")
    assert code == 0 and json.loads(out)["schema_proposed"] == []
    stored = Registry(tmp_path / "r").dataset("stops").schema("s")
    assert stored.column("race").categories == ("a", "b", "c") and stored.max_rows == 100000
    assert json.loads(out)["schema_history"][0]["note"] == "registered: declared by the owner"


BAD_FILES = [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "list of 'columns'"),
    ({"columns": GOOD["columns"]}, "'max_rows'"),
    ({**GOOD, "maxrows": 5}, "unknown key(s) maxrows"),
    ({**GOOD, "columns": [*GOOD["columns"][:2], {"name": "precinct", "type": "int32x"}]},
     "unknown column type 'int32x'"),
    ({**GOOD, "columns": [*GOOD["columns"][:2], {"name": "precinct", "type": "integer",
                                                 "nulable": False}]}, "nulable"),
    ({**GOOD, "columns": GOOD["columns"][:2]}, "not declared: precinct"),
    ({**GOOD, "columns": [GOOD["columns"][1], GOOD["columns"][0], GOOD["columns"][2]]},
     "the order differs"),
    ({**GOOD, "columns": [*GOOD["columns"][:2], {"name": "Precinct", "type": "integer"}]},
     "not in the file: Precinct"),
    ({**GOOD, "columns": [*GOOD["columns"][:2], {"name": "precinct", "type": "integer",
                                                 "bounds": [5]}]}, "'bounds' must be"),
    ({**GOOD, "max_rows": 0}, "size class"),
]  # fmt: skip


@pytest.mark.parametrize("data, needle", BAD_FILES)
def test_a_bad_schema_file_is_one_line_exit_2_and_registers_nothing(
    capsys, tmp_path, table, data, needle
):
    path = schema_file(tmp_path, data)
    code, out, err = add(capsys, tmp_path / "r", table, "--schema", f"s={path}")
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert needle in err and "Fix:" in err and "Traceback" not in err
    assert not (tmp_path / "r").exists() or Registry(tmp_path / "r").datasets() == []


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--schema", "x={good}"], "names table 'x'"),
        (["--max-rows", "s=lots"], "expected a whole number"),
        (["--max-rows", "s"], "expects TABLE=VALUE"),
        (["--schema", "s={missing}"], "file not found"),
    ],
)
def test_bad_schema_options_are_one_line(capsys, tmp_path, table, extra, needle):
    good = schema_file(tmp_path, GOOD)
    extra = [e.format(good=good, missing=tmp_path / "nope.json") for e in extra]
    code, out, err = add(capsys, tmp_path / "r", table, *extra)
    assert code == 2 and err.count("\n") == 1 and needle in err, err
    assert not (tmp_path / "r").exists() or Registry(tmp_path / "r").datasets() == []


def test_schema_set_show_and_history(capsys, tmp_path, table):
    reg = tmp_path / "r"
    assert add(capsys, reg, table)[0] == 0
    code, out, err = run(
        capsys,
        ["dataset", "schema", "stops", "--set", "race=text,max=8,categories=a|b|c",
         "--set", "precinct=,required,bounds=0:99", "--max-rows", "100000",
         "--registry", str(reg)],
    )  # fmt: skip
    assert code == 0, err
    assert "race: text,nullable,max=256 -> text,nullable,max=8,categories=a|b|c" in out
    assert "precinct: integer,nullable -> integer,required,bounds=0:99" in out
    assert "max rows 1,000 -> 100,000" in out
    schema = Registry(reg).dataset("stops").schema("s")
    assert schema.column("precinct").nullable is False and schema.max_rows == 100000
    code, out, _ = run(capsys, ["dataset", "schema", "stops", "--json", "--registry", str(reg)])
    shown = json.loads(out)
    assert shown["schemas"]["s"] == schema.to_json()
    history = shown["schema_history"]
    assert len(history) == 2 and history[1]["before"]["max_rows"] == 1000
    assert history[1]["after"] == schema.to_json() and "--set race=" in history[1]["note"]
    code, out, _ = run(capsys, ["dataset", "show", "stops", "--json", "--registry", str(reg)])
    assert json.loads(out)["schemas"]["s"] == schema.to_json()
    assert len(json.loads(out)["schema_history"]) == 2
    assert json.loads(out)["schema_proposed"] == []  # edited: no longer the bare proposal
    code, out, _ = run(capsys, ["dataset", "show", "stops", "--registry", str(reg)])
    assert "categories" in out and "a|b|c" in out and "schema history:" in out


@pytest.mark.parametrize(
    "edit, needle",
    [
        (["--set", "nope=integer"], "naming a column of the table"),
        (["--set", "race=decimalish"], "unknown column type"),
        (["--set", "race=text,max=0"], "max: must be a whole number in [1, 1000000]"),
        (["--set", "precinct=integer,bounds=9:1"], "low <= high"),
        (["--set", "precinct=integer,bounds=a:b"], "bounds must be LO:HI"),
        (["--set", "race=text,colour=red"], "unknown option 'colour=red'"),
        (["--set", "precinct=float,categories=1|2"], "categories apply to"),
        (["--table", "zz", "--set", "race=text"], "no table 'zz'"),
    ],
)
def test_bad_edits_are_one_line_and_change_nothing(capsys, tmp_path, table, edit, needle):
    reg = tmp_path / "r"
    assert add(capsys, reg, table)[0] == 0
    before = Registry(reg).dataset("stops").schema("s")
    code, out, err = run(capsys, ["dataset", "schema", "stops", *edit, "--registry", str(reg)])
    assert code == 2 and out == "" and err.count("\n") == 1 and needle in err, err
    assert Registry(reg).dataset("stops").schema("s") == before
    assert len(Registry(reg).schema_history("stops")) == 1


def test_from_file_replaces_the_schema(capsys, tmp_path, table):
    reg = tmp_path / "r"
    assert add(capsys, reg, table)[0] == 0
    path = schema_file(tmp_path, GOOD)
    code, _, err = run(
        capsys, ["dataset", "schema", "stops", "--from-file", str(path), "--registry", str(reg)]
    )
    assert code == 0, err
    assert Registry(reg).dataset("stops").schema("s").column("precinct").bounds == (0.0, 99.0)


def test_an_analyst_sees_the_schema_but_cannot_edit_it(capsys, tmp_path, table, monkeypatch):
    reg = tmp_path / "r"
    assert add(capsys, reg, table)[0] == 0
    before = Registry(reg).dataset("stops").schema("s")
    monkeypatch.setenv("DPX_MODE", "analyst")
    path = schema_file(tmp_path, GOOD)
    for edit in (["--set", "race=text,max=8"], ["--max-rows", "5000"], ["--from-file", str(path)]):
        code, out, err = run(capsys, ["dataset", "schema", "stops", *edit, "--registry", str(reg)])
        assert code == 2 and out == "" and err.count("\n") == 1 and "data owner" in err
    assert Registry(reg).dataset("stops").schema("s") == before
    assert len(Registry(reg).schema_history("stops")) == 1
    code, out, _ = run(capsys, ["dataset", "schema", "stops", "--json", "--registry", str(reg)])
    assert code == 0 and json.loads(out)["schemas"]["s"] == before.to_json()
    code, out, _ = run(capsys, ["dataset", "show", "stops", "--json", "--registry", str(reg)])
    assert json.loads(out)["schemas"]["s"] == before.to_json() and str(table) not in out


def test_a_dataset_without_a_stored_schema_says_so_and_the_owner_declares_one(
    capsys, tmp_path, table
):
    import sqlite3

    reg = tmp_path / "r"
    assert add(capsys, reg, table)[0] == 0
    con = sqlite3.connect(reg / "registry.sqlite")  # as if registered before v4
    con.execute("DELETE FROM table_schemas")
    con.execute("DELETE FROM schema_changes")
    con.commit()
    con.close()
    code, out, _ = run(capsys, ["dataset", "show", "stops", "--registry", str(reg)])
    assert code == 0 and "table s: no declared schema" in out
    code, out, _ = run(capsys, ["dataset", "show", "stops", "--json", "--registry", str(reg)])
    assert json.loads(out)["schemas"] == {"s": None}
    assert "no schema stored for s" in json.loads(out)["schema_note"]
    code, _, err = run(
        capsys,
        ["dataset", "schema", "stops", "--set", "race=text,max=4", "--registry", str(reg)],
    )
    assert code == 0, err
    declared = Registry(reg).dataset("stops").schema("s")
    assert declared.names == ["stop_id", "race", "precinct"]
    assert declared.column("race").max_length == 4
    (change,) = Registry(reg).schema_history("stops")
    assert change.before is None and change.after == declared
