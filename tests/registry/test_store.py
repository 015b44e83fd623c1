"""core/registry/store.py: the registry file is checked on open and never re-created, SQLite
failures become one-line RegistryErrors, and backups are consistent (issue 17 item 1)."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from core.errors import InputError
from core.registry.dberrors import registry_error, registry_errors
from core.registry.models import Mechanism, Policy
from core.registry.registry import Registry
from core.registry.store import (
    APPLICATION_ID,
    FILE_NAME,
    RegistryError,
    backup,
    connect,
    restore,
)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def registry_with_history(directory: Path, tmp_path: Path, releases: int = 30) -> Registry:
    table = tmp_path / "t.csv"
    table.write_text("uid,x\n1,2\n")
    reg = Registry(directory)
    reg.add_dataset("d", [("t", str(table))], Policy(100.0))
    for i in range(releases):
        r = reg.charge("sql", "d", {"i": i, "pad": "p" * 200}, [Mechanism("count", 0.5)], "secure")
        reg.attach(r.id, {"rows": [[i]] * 20})
    return reg


def test_a_new_registry_is_created_with_the_marker(tmp_path):
    con = connect(tmp_path / "reg")
    assert con.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    con.close()
    assert sorted(p.name for p in (tmp_path / "reg").iterdir() if ".dpx-" in p.name) == []


def test_a_zero_length_registry_is_refused_not_recreated(tmp_path):
    directory = tmp_path / "reg"
    directory.mkdir()
    (directory / FILE_NAME).write_bytes(b"")
    with pytest.raises(RegistryError) as info:
        Registry(directory)
    message = str(info.value)
    assert "empty" in message and "restore" in message and "\n" not in message
    assert (directory / FILE_NAME).stat().st_size == 0


@pytest.mark.parametrize(
    ("content", "needle"),
    [(b"name,value\n1,2\n" * 100, "damaged"), (b"\0" * 8192, "damaged")],
    ids=["text file", "zeros"],
)
def test_a_file_that_is_not_sqlite_is_refused_untouched(tmp_path, content, needle):
    directory = tmp_path / "reg"
    directory.mkdir()
    (directory / FILE_NAME).write_bytes(content)
    with pytest.raises(RegistryError, match=needle):
        Registry(directory)
    assert (directory / FILE_NAME).read_bytes() == content


def test_another_applications_sqlite_file_is_refused(tmp_path):
    directory = tmp_path / "reg"
    directory.mkdir()
    con = sqlite3.connect(directory / FILE_NAME)
    con.execute("CREATE TABLE notes (x)")
    con.commit()
    con.close()
    before = digest(directory / FILE_NAME)
    with pytest.raises(RegistryError, match="not a DP Explorer registry"):
        Registry(directory)
    assert digest(directory / FILE_NAME) == before


def test_an_empty_sqlite_file_without_schema_is_refused(tmp_path):
    directory = tmp_path / "reg"
    directory.mkdir()
    sqlite3.connect(directory / FILE_NAME).execute("PRAGMA user_version = 1").close()
    with pytest.raises(RegistryError, match="not a DP Explorer registry"):
        Registry(directory)


def test_a_registry_made_before_the_marker_is_accepted_and_stamped(tmp_path):
    from core.registry.store import migrate

    directory = tmp_path / "reg"
    directory.mkdir()
    con = sqlite3.connect(directory / FILE_NAME, isolation_level=None)
    migrate(con)
    con.execute("PRAGMA application_id = 0")  # as written by the code before issue 17
    con.close()
    Registry(directory).close()
    con = sqlite3.connect(directory / FILE_NAME)
    assert con.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    con.close()


def test_random_bytes_in_the_middle_are_refused_and_the_file_is_untouched(tmp_path):
    directory = tmp_path / "reg"
    registry_with_history(directory, tmp_path).close()
    path = directory / FILE_NAME
    data = bytearray(path.read_bytes())
    assert len(data) > 32_768
    middle = len(data) // 2
    data[middle : middle + 8192] = np.random.default_rng(17).bytes(8192)
    path.write_bytes(bytes(data))
    before = digest(path)
    with pytest.raises(RegistryError) as info:
        Registry(directory)
    assert "damaged" in str(info.value) and "restore" in str(info.value)
    assert digest(path) == before


def test_a_missing_registry_with_a_leftover_wal_is_refused(tmp_path):
    directory = tmp_path / "reg"
    directory.mkdir()
    (directory / (FILE_NAME + "-wal")).write_bytes(b"x" * 100)
    with pytest.raises(RegistryError, match="wal"):
        Registry(directory)
    assert not (directory / FILE_NAME).exists()


@pytest.mark.parametrize(
    ("code", "name", "needle"),
    [
        (13, "SQLITE_FULL", "is full"),
        (11, "SQLITE_CORRUPT", "damaged"),
        (26, "SQLITE_NOTADB", "damaged"),
        (8, "SQLITE_READONLY", "cannot be written"),
        (5, "SQLITE_BUSY", "locked"),
        (266, "SQLITE_IOERR_READ", "could not be read"),
    ],
)
def test_sqlite_errors_become_one_line_registry_errors_by_code(code, name, needle):
    err = sqlite3.OperationalError("some text\nover two lines")
    err.sqlite_errorcode = code
    err.sqlite_errorname = name
    message = str(registry_error(err, "/r/registry.sqlite"))
    assert needle in message and "Fix:" in message and "\n" not in message


def test_the_context_manager_and_decorator_convert(tmp_path):
    @registry_errors(tmp_path)
    def broken():
        raise sqlite3.DatabaseError("database disk image is malformed")

    with pytest.raises(RegistryError, match="damaged"):
        broken()
    with pytest.raises(RegistryError, match="is full"), registry_errors(tmp_path):
        raise sqlite3.OperationalError("database or disk is full")
    with pytest.raises(KeyError), registry_errors(tmp_path):
        raise KeyError("not sqlite")


def test_backup_and_restore_round_trip(tmp_path):
    source = tmp_path / "reg"
    reg = registry_with_history(source, tmp_path, releases=5)
    spent = reg.spent("d")
    reg.close()
    copy = backup(source, tmp_path / "b.sqlite")
    assert copy == tmp_path / "b.sqlite"
    fresh = tmp_path / "fresh"
    restore(copy, fresh)
    assert Registry(fresh).spent("d") == spent
    with pytest.raises(InputError, match="--force"):
        restore(copy, source)  # holds datasets: refused without --force
    restore(copy, source, force=True)
    assert Registry(source).spent("d") == spent


def test_restore_over_a_damaged_registry_moves_it_aside(tmp_path):
    source = tmp_path / "reg"
    registry_with_history(source, tmp_path, releases=2).close()
    copy = backup(source, tmp_path / "b.sqlite")
    (source / FILE_NAME).write_bytes(b"garbage" * 1000)
    with pytest.raises(RegistryError, match="--force"):
        restore(copy, source)
    restore(copy, source, force=True)
    aside = [p for p in source.iterdir() if ".damaged-" in p.name]
    assert len(aside) == 1 and aside[0].read_bytes() == b"garbage" * 1000
    assert Registry(source).spent("d") == (1.0, 0.0)


def test_restore_over_a_zero_length_registry_needs_no_force(tmp_path):
    source = tmp_path / "reg"
    registry_with_history(source, tmp_path, releases=1).close()
    copy = backup(source, tmp_path / "b.sqlite")
    target = tmp_path / "other"
    target.mkdir()
    (target / FILE_NAME).write_bytes(b"")
    restore(copy, target)
    assert Registry(target).spent("d") == (0.5, 0.0)


def test_a_damaged_file_is_not_accepted_as_a_backup(tmp_path):
    bad = tmp_path / "b.sqlite"
    bad.write_bytes(b"junk" * 2000)
    with pytest.raises(RegistryError):
        restore(bad, tmp_path / "reg")
    assert not (tmp_path / "reg" / FILE_NAME).exists()


WRITER = textwrap.dedent(
    """
    import sys
    from core.registry.models import Mechanism
    from core.registry.registry import Registry
    reg = Registry(sys.argv[1])
    print("ready", flush=True)
    for i in range(10_000):
        r = reg.charge("sql", "d", {"i": i}, [Mechanism("count", 0.001)], "secure")
        reg.attach(r.id, {"i": i})
    """
)


def test_a_backup_taken_while_another_process_charges_is_consistent(tmp_path):
    source = tmp_path / "reg"
    registry_with_history(source, tmp_path, releases=1).close()
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(source)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert writer.stdout.readline().strip() == "ready"
        copies = [backup(source, tmp_path / f"b{i}.sqlite") for i in range(5)]
    finally:
        writer.kill()
        writer.wait()
    for copy in copies:
        con = sqlite3.connect(copy)
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        total, rows = con.execute(
            "SELECT sum(epsilon), count(*) FROM releases WHERE dataset='d'"
        ).fetchone()
        assert abs(total - (0.5 + 0.001 * (rows - 1))) < 1e-9  # whole transactions only
        con.close()
    assert os.listdir(tmp_path).count("b0.sqlite") == 1
