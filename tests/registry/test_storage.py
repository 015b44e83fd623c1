"""Artefacts stored by need (issue 29, item 6): compact bodies that read back as the same dict
(older JSON-text rows too) under an unchanged SHA-256; seeded demo runs keep only their record;
`prune` drops old demo and unregistered bodies only, keeps every record and charge, is recorded
and idempotent; a v6 registry migrates."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import numpy as np
import pytest

from core.errors import InputError
from core.privacy import Cost
from core.registry import Policy, Registry, RunKind
from core.registry.migrations import MIGRATIONS, schema_version
from core.registry.storage import HEADER, NOT_KEPT_DEMO
from core.registry.store import FILE_NAME
from core.reports import report_html
from core.spatial.record import GridSpec, LocationArtefact

SIDE = 200  # 40 000 leaves: the shape of an HB/Privelet release, smaller
MAX_STORED_FRACTION = 0.35  # measured 0.29 at 1M leaves (bench/artefact_storage.py)


def big_artefact(side: int = SIDE) -> dict:
    rng = np.random.default_rng(3)
    n = side * side
    r, c = np.divmod(np.arange(n), side)
    return LocationArtefact(
        method="hb",
        label="HB",
        unit="one point",
        grid=GridSpec((-74.1, 40.6, -73.7, 40.9), side, side),
        leaves=tuple(map(tuple, np.stack([r, r + 1, c, c + 1], axis=1).tolist())),
        values=tuple((rng.poisson(3.0, n) + rng.laplace(0, 22.0, n)).tolist()),
        leaf_scale=tuple([22.0] * n),
        height=8,
    ).to_json()


def canonical_sha(artefact: dict) -> str:
    text = json.dumps(artefact, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def stored(reg: Registry, rid: int):
    return reg._read("SELECT artefact FROM releases WHERE id=?", (rid,))[0][0]


def teaching(reg: Registry, table) -> None:
    reg.add_dataset("d", [("t", table)], Policy(10.0))
    reg.add_dataset("teach", [("t", table)], Policy(10.0), teaching=True)


def test_a_large_artefact_is_stored_compactly_and_reads_back_the_same(reg):
    art = big_artefact()
    run = reg.charge("location", None, {"method": "hb"}, Cost(1.0), "secure")
    back = reg.attach(run.id, art)
    body = stored(reg, run.id)
    text = json.dumps(art, default=str).encode()  # what the registry stored before v7
    assert isinstance(body, bytes) and body.startswith(HEADER)
    assert len(body) <= MAX_STORED_FRACTION * len(text)
    assert back.artefact == art and reg.release(run.id).artefact == art
    assert back.artefact_sha256 == canonical_sha(art)  # the published hash's meaning is unchanged
    assert back.artefact_bytes == len(json.dumps(art, sort_keys=True, separators=(",", ":")))
    usage = {k.kind: k for k in reg.storage_info().kinds}["unregistered"]
    assert (usage.bodies, usage.stored_bytes) == (1, len(body))


def test_a_json_text_row_written_before_v7_still_reads(reg):
    art = {"tool": "sql", "columns": ["a"], "rows": [[1.5], [None]], "b": {"z": 1, "a": 2}}
    run = reg.charge("sql", None, {}, Cost(1.0), "secure")
    reg.attach(run.id, art)
    with reg._write() as con:  # the row as the old code wrote it
        con.execute(
            "UPDATE releases SET artefact=?, artefact_bytes=NULL WHERE id=?",
            (json.dumps(art), run.id),
        )
    got = reg.release(run.id)
    assert got.artefact == art and list(got.artefact["b"]) == ["z", "a"]
    assert got.artefact_sha256 == canonical_sha(art)


def test_a_seeded_demo_run_keeps_only_its_record(reg, table):
    teaching(reg, table)
    art = big_artefact(20)
    run = reg.charge("location", "teach", {"method": "hb"}, Cost(1.0), "seeded")
    got = reg.attach(run.id, art)
    assert got.kind is RunKind.DEMO and got.artefact is None and stored(reg, run.id) is None
    assert got.artefact_sha256 == canonical_sha(art)
    assert got.artefact_bytes == len(json.dumps(art, sort_keys=True, separators=(",", ":")))
    assert got.artefact_note == NOT_KEPT_DEMO
    assert "not kept: demo run" in report_html(reg, run.id)
    demo = {k.kind: k for k in reg.storage_info().kinds}["demo"]
    assert (demo.runs, demo.bodies, demo.not_kept) == (1, 0, 1)
    # a pilot (read back by later plans) and a registry asked to keep demos keep the body
    pilot = reg.charge("pilot", "teach", {}, Cost(0.1), "seeded")
    assert reg.attach(pilot.id, {"tool": "pilot", "x": [1]}).artefact == {"tool": "pilot", "x": [1]}
    kept = Registry(reg.directory, keep_demo_artefacts=True)
    again = kept.charge("location", "teach", {"method": "hb"}, Cost(1.0), "seeded")
    assert kept.attach(again.id, art).artefact == art


def test_secure_runs_keep_their_artefact(reg, table):
    teaching(reg, table)
    art = big_artefact(10)
    run = reg.charge("location", "d", {"method": "hb"}, Cost(1.0), "secure")
    assert reg.attach(run.id, art).artefact == art


def _age(reg: Registry, rid: int, days: int) -> None:
    with reg._write() as con:
        con.execute(
            "UPDATE releases SET time=datetime(time, ?) || '+00:00' WHERE id=?",
            (f"-{days} days", rid),
        )


def test_prune_drops_only_old_demo_and_unregistered_bodies(reg, table):
    teaching(reg, table)
    art = big_artefact(30)
    keep = Registry(reg.directory, keep_demo_artefacts=True)
    release = reg.charge("location", "d", {"method": "hb"}, Cost(1.0), "secure")
    old_unreg = reg.charge("location", None, {"method": "hb"}, Cost(1.0), "secure")
    old_demo = keep.charge("location", "teach", {"method": "hb"}, Cost(1.0), "seeded")
    new_unreg = reg.charge("location", None, {"method": "hb"}, Cost(1.0), "secure")
    for r in (release, old_unreg, old_demo, new_unreg):
        keep.attach(r.id, art)
    for r in (release, old_unreg, old_demo):
        _age(reg, r.id, 30)
    before = {r.id: r for r in reg.releases()}
    spent = reg.spent("d")
    pruned = reg.prune("7d")
    assert set(pruned.runs) == {old_unreg.id, old_demo.id} and pruned.stored_bytes > 0
    after = {r.id: r for r in reg.releases()}
    assert after.keys() == before.keys()  # every record stays
    assert after[release.id].artefact == art and after[new_unreg.id].artefact == art
    for rid in (old_unreg.id, old_demo.id):
        r = after[rid]
        assert r.artefact is None and r.artefact_note.startswith("not kept: pruned")
        assert (r.artefact_sha256, r.epsilon, r.mechanisms, r.status) == (
            before[rid].artefact_sha256,
            before[rid].epsilon,
            before[rid].mechanisms,
            before[rid].status,
        )
    assert reg.spent("d") == spent
    assert reg.prune("7d").runs == ()  # idempotent
    assert reg.storage_info().prunes == 2
    rows = sqlite3.connect(reg.directory / FILE_NAME).execute("SELECT runs FROM prunes").fetchall()
    assert rows == [(2,), (0,)]


@pytest.mark.parametrize("age", ["7", "d", "-1d", "7 days", "", "1e3d"])
def test_prune_refuses_a_bad_age_in_one_line(reg, age):
    with pytest.raises(InputError, match="Fix: e.g. --older-than 7d"):
        reg.prune(age)


def test_a_v6_registry_is_migrated_and_its_json_rows_read(registry_dir, table):
    reg = Registry(registry_dir)
    teaching(reg, table)
    art = {"tool": "pp", "rows": [1, 2, 3]}
    run = reg.charge("pp", "d", {}, Cost(1.0), "secure")
    reg.close()
    con = sqlite3.connect(registry_dir / FILE_NAME)
    con.execute("DROP TABLE prunes")
    con.execute("ALTER TABLE releases DROP COLUMN artefact_bytes")
    con.execute("ALTER TABLE releases DROP COLUMN artefact_note")
    con.execute(  # attached by the v6 code: JSON text
        "UPDATE releases SET status='released', artefact=?, artefact_sha256=? WHERE id=?",
        (json.dumps(art), canonical_sha(art), run.id),
    )
    con.execute("DELETE FROM schema_version WHERE version >= 7")
    con.commit()
    con.close()
    again = Registry(registry_dir)
    assert schema_version(again._con) == len(MIGRATIONS) == 7
    got = again.release(run.id)
    assert got.artefact == art and got.artefact_bytes is None and got.artefact_note == ""
    assert again.spent("d") == (1.0, 0.0)
    info = {k.kind: k for k in again.storage_info().kinds}
    assert info["release"].bodies == 1 and info["release"].json_bytes == len(json.dumps(art))
    assert again.prune("0d").runs == ()  # a registered release is never pruned
    assert again.release(run.id).artefact == art
