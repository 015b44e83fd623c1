"""The session store (ui/state.py) is bounded and says what it lost (uploads are kept apart, in
`ui.upload_store`: tests/app/test_uploads.py); sessions untouched for longer than the age
limit are deleted; the store's directory is the server user's alone; a token that is not one
(a path, a short string) never names a directory."""

from __future__ import annotations

import os
import time

import ui.state as store
from ui.state import TOKEN_PARAM

PP = "pages/pp_balancing.py"
TABLE = b"x,sa\n" + b"".join(f"{i},{'abc'[i % 3]}\n".encode() for i in range(3000))


def test_an_upload_does_not_count_against_the_session_limit(app_test, registry_dir, monkeypatch):
    """Issue 29: an upload's bytes are kept once in the upload store (`ui.upload_store`, its
    own quota); the session keeps only its name and digest, so a tiny per-session limit still
    brings the upload back after a reload."""
    monkeypatch.setattr(store, "MAX_SESSION_BYTES", 10_000)  # the upload is ~20 kB
    at = app_test(PP).run()
    at.radio(key="pp_source").set_value("Upload CSV/Parquet").run()
    at.file_uploader(key="pp_upload").set_value(("big.csv", TABLE, "text/csv")).run()
    assert not at.exception and at.metric  # the page works on it in this session
    at.run()
    back = app_test(PP)
    back.query_params[TOKEN_PARAM] = at.query_params[TOKEN_PARAM]
    back.run()
    assert not [w.value for w in back.warning if "Not kept across the reload" in w.value]
    assert any("uploaded earlier" in c.value and "big.csv" in c.value for c in back.caption)
    assert back.metric  # the same table, from the upload store


def test_old_sessions_are_deleted_and_the_store_is_private(app_test, registry_dir):
    root = store.sessions_root()
    old = root / ("0" * 32)
    old.mkdir(parents=True)
    (old / "widgets.pkl").write_bytes(b"x")
    past = time.time() - store.MAX_AGE_S - 60
    os.utime(old, (past, past))
    at = app_test(PP).run()
    assert not old.exists()
    mine = root / at.session_state["_dpx_session"][1]
    assert mine.is_dir() and (root.stat().st_mode & 0o077) == 0


def test_a_token_that_is_not_one_names_no_directory(app_test, registry_dir):
    at = app_test(PP)
    at.query_params[TOKEN_PARAM] = "../../etc"
    at.run()
    assert not at.exception
    assert at.query_params[TOKEN_PARAM] != "../../etc"  # replaced by a fresh token
    assert all(len(p.name) == 32 for p in store.sessions_root().iterdir())
