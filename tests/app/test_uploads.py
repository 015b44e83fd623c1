"""Uploads cost what they weigh (issue 29 item 2): a file over the limit is refused from its size
and leaves nothing on disk; an accepted one is kept once, by content, in the upload store
(`ui.upload_store`), never as a pickled copy in each session; the store stays within its quota,
evicting the least recently used first; the quota and lifetime are stated where uploads are
offered; a session whose file was evicted says so after a reload."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from ui.state import TOKEN_PARAM

PP = "pages/pp_balancing.py"
SQL = "pages/dp_sql.py"
TABLE = b"x,sa\n" + b"".join(f"{i},{'abc'[i % 3]}\n".encode() for i in range(3000))


def _files(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


def _upload(app_test, script, name, data, tool="pp", token=None):
    at = app_test(script)
    if token:
        at.query_params[TOKEN_PARAM] = token
    at.run()
    at.radio(key=f"{tool}_source").set_value("Upload CSV/Parquet").run()
    value = (name, data, "text/csv")
    at.file_uploader(key=f"{tool}_upload").set_value([value] if tool == "dpsql" else value).run()
    return at


def test_a_file_over_the_limit_is_refused_and_nothing_is_stored(app_test, registry_dir):
    big = b"x,sa\n" + b"1,a\n" * (201 * 1024 * 1024 // 4)  # 201 MiB, over the 200 MB limit
    at = app_test(PP).run()
    at.radio(key="pp_source").set_value("Upload CSV/Parquet").run()
    before = _files(registry_dir)
    at.file_uploader(key="pp_upload").set_value(("big.csv", big, "text/csv")).run()
    assert not at.exception
    after = _files(registry_dir)
    grown = {p: z for p, z in after.items() if before.get(p) != z and z > 64 * 1024}
    assert not grown, f"a refused upload left bytes on disk: {grown}"
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "over the 200 MB limit" in errors[0]
    assert "\n" not in errors[0] and "Nothing was stored" in errors[0]
    assert not at.metric  # nothing was read either


def test_one_file_too_large_among_several_stores_none_of_them(app_test, registry_dir):
    big = b"x,sa\n" + b"1,a\n" * (201 * 1024 * 1024 // 4)
    at = app_test(SQL).run()
    at.radio(key="dpsql_source").set_value("Upload CSV/Parquet").run()
    before = _files(registry_dir)
    at.file_uploader(key="dpsql_upload").set_value(
        [("small.csv", TABLE, "text/csv"), ("big.csv", big, "text/csv")]
    ).run()
    assert not at.exception
    grown = {p: z for p, z in _files(registry_dir).items() if before.get(p) != z and z > 4096}
    assert not grown, f"a refused upload left bytes on disk: {grown}"
    assert [e.value for e in at.error if "over the 200 MB limit" in e.value]


def test_an_upload_is_kept_once_by_content_not_in_each_session(app_test, registry_dir):
    from ui.state import sessions_root

    first = _upload(app_test, PP, "a.csv", TABLE)
    second = _upload(app_test, PP, "same-bytes.csv", TABLE)
    assert first.metric and second.metric and not first.exception
    sessions = _files(sessions_root())
    assert sessions and max(sessions.values()) < len(TABLE) // 4, sessions  # no copy of the bytes
    from ui import upload_store

    digest = hashlib.sha256(TABLE).hexdigest()
    stored = [p.name for p in upload_store.uploads_root().iterdir() if p.name[0] != "."]
    assert stored == [digest]
    assert (upload_store.uploads_root().stat().st_mode & 0o077) == 0
    assert (upload_store.uploads_root() / digest).stat().st_mode & 0o077 == 0


def test_quota_and_lifetime_are_stated_where_uploads_are_offered(app_test, registry_dir):
    at = app_test(SQL).run()
    at.radio(key="dpsql_source").set_value("Upload CSV/Parquet").run()
    captions = " ".join(c.value for c in at.caption)
    assert "24 hours" in captions and "2 GB" in captions and "200 MB" in captions


def test_the_store_evicts_the_least_recently_used_first_and_never_exceeds_its_quota(
    registry_dir, monkeypatch
):
    from ui import upload_store

    monkeypatch.setattr(upload_store, "QUOTA_BYTES", 25_000)
    kept = []
    for i in range(6):
        data = bytes([65 + i]) * 10_000
        kept.append(upload_store.store(f"f{i}.csv", data))
        past = time.time() - 1000 + i * 10  # f0 was used longest ago
        os.utime(kept[-1].path, (past, past))
        assert upload_store.stored_bytes() <= 25_000
        if i == 2:
            upload_store.touch(kept[0])  # f0 used again now: f1 becomes the oldest
    present = [k.name for k in kept if k.exists()]
    assert present == ["f4.csv", "f5.csv"], present  # each new one pushed out the oldest use
    with pytest.raises(Exception, match="over the 0 MB limit"):
        upload_store.store("huge.csv", b"x" * 30_000)  # larger than the whole quota: refused
    assert upload_store.stored_bytes() <= 25_000


def test_touch_orders_eviction(registry_dir, monkeypatch):
    from ui import upload_store

    monkeypatch.setattr(upload_store, "QUOTA_BYTES", 25_000)
    a = upload_store.store("a.csv", b"a" * 10_000)
    b = upload_store.store("b.csv", b"b" * 10_000)
    old = time.time() - 100
    os.utime(a.path, (old, old))
    os.utime(b.path, (old - 50, old - 50))  # b used before a
    upload_store.store("c.csv", b"c" * 10_000)
    assert a.exists() and not b.exists()


def test_expired_uploads_are_removed(registry_dir):
    from ui import upload_store

    kept = upload_store.store("a.csv", b"a" * 100)
    past = time.time() - upload_store.LIFETIME_S - 60
    os.utime(kept.path, (past, past))
    fresh = upload_store.store("b.csv", b"b" * 100)
    assert not kept.exists() and fresh.exists()


def test_an_evicted_upload_is_said_gone_after_a_reload(app_test, registry_dir):
    from ui import upload_store

    at = _upload(app_test, PP, "mine.csv", TABLE)
    assert at.metric
    at.run()
    for p in upload_store.uploads_root().iterdir():
        if not p.name.startswith("."):
            p.unlink()  # evicted by other sessions' uploads, or expired
    back = app_test(PP)
    back.query_params[TOKEN_PARAM] = at.query_params[TOKEN_PARAM]
    back.run()
    assert not back.exception
    gone = [w.value for w in back.warning if "no longer kept on the server" in w.value]
    assert gone and "24 hours" in gone[0] and "Upload them again" in gone[0]
    assert not back.metric


def test_the_app_removes_a_killed_runs_work_directory_and_expired_uploads_at_start(
    app_test, registry_dir, tmp_path, monkeypatch
):
    """app.py's one start-up call: a dead process's `dpx-spill-PID-*` in a recorded spill
    directory goes; a live process's stays; an upload past its lifetime goes."""
    import subprocess
    import sys

    import streamlit as st

    monkeypatch.setenv("DPX_WORK_PARENTS", str(tmp_path / "work-parents"))
    spill = tmp_path / "spill"
    spill.mkdir()
    (tmp_path / "work-parents").write_text(f"{spill.resolve()}\n")
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    dead = spill / f"dpx-spill-{done.stdout.strip()}-x"
    dead.mkdir()
    live = spill / f"dpx-pp-{os.getpid()}-x"
    live.mkdir()
    stored = registry_dir / "app-uploads" / ("0" * 64)
    stored.parent.mkdir(parents=True)
    stored.write_bytes(b"old private rows")
    past = time.time() - 25 * 3600
    os.utime(stored, (past, past))
    st.cache_resource.clear()  # a fresh server process
    app_test("app.py").run()
    assert not dead.exists() and live.is_dir() and not stored.exists()
