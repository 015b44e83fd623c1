"""Session state a person can trust: widget values kept across navigation, and a session's work
kept across a reload (F5) and a server restart.

Streamlit deletes the state of every widget that is not drawn in a run (visiting Home resets a
page), and it starts a brand-new session on every reload. So:

* `persist(key, default)` keeps a shadow copy of a widget's value under a non-widget key and puts
  it back before the widget is drawn (pass the default to `persist`, not to the widget);
  `kept(key, options, default)` does the same but first drops a kept value that is no longer
  an option.
* `put(key, value, label)` keeps a piece of the session's work (an upload, a set of releases, an
  evaluation, a tuning answer) in `st.session_state` AND on disk.
* The session is named by a random token in the URL (`?s=…`, `st.query_params`). Its work lives
  server-side, under the registry directory (`<registry>/app-sessions/<id>/`, mode 0700) —
  never in the browser. A reload with the same URL restores the widget shadows and the work.
  The directory is named by a one-way id of the token (`session_id()`), which is also what
  release params record (`"session"`), so a release row never reveals the URL's token.
* Bounded: at most `MAX_SESSION_BYTES` per session (an item that does not fit is not kept,
  and after a reload the page says plainly what was lost), sessions untouched for
  `MAX_AGE_S` are deleted, and at most `MAX_SESSIONS` are kept.

Rule for every page: never call a Streamlit element inside a `st.cache_data`/`st.cache_resource`
function (cached values are shared between sessions and replayed); keep results with `put`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import re
import secrets
import shutil
import time
from collections.abc import Iterable
from pathlib import Path

import streamlit as st

from core.registry.store import default_directory

TOKEN_PARAM = "s"
ENV_VAR = "DPX_APP_SESSIONS"  # where sessions are kept (default: <registry>/app-sessions)
MAX_SESSION_BYTES = 256 * 1024 * 1024
MAX_AGE_S = 48 * 3600
MAX_SESSIONS = 500
_TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{20,64}$")
LIVE_S = 15 * 60  # a session that ran in this server within this time counts as live
_LIVE: dict[str, float] = {}  # session id -> last run (this server process)

_SHADOW = "_persist::"
_STARTED = "_dpx_session"  # (token, id) of this Streamlit session once started
_SAVED = "_dpx_session_saved"  # digest of the widget shadows last written
_RESTORE_NOTES = "_dpx_session_notes"  # what a reload could not bring back, in words
_SHOWN = "_dpx_shown_releases"  # registry ids this session has shown (work key)
WIDGETS_FILE = "widgets.pkl"
LOST_FILE = "lost.pkl"


# -- widget values across navigation ---------------------------------------------------------
def persist(key: str, default=None) -> str:
    """Return `key` after making sure the widget `key` gets its last value (or `default`) back.

    Call it as the widget's `key=` argument, on every run of the page. Nothing is released:
    this only keeps the session's own inputs."""
    shadow = _SHADOW + key
    if key in st.session_state:
        st.session_state[shadow] = st.session_state[key]
    elif shadow in st.session_state:
        st.session_state[key] = st.session_state[shadow]
    elif default is not None:
        st.session_state[key] = default
    return key


def kept(key: str, options: Iterable, default=None) -> str:
    """`persist(key, default)`, first dropping a kept value that is no longer an option (a
    list value: any element that is no longer an option)."""
    options = list(options)
    for k in (key, _SHADOW + key):
        value = st.session_state.get(k)
        if value is None:
            continue
        stale = not set(value) <= set(options) if isinstance(value, list) else value not in options
        if stale:
            forget(key)
            break
    return persist(key, default)


def forget(*keys: str) -> None:
    """Drop persisted widget values (e.g. when a new upload makes old choices meaningless)."""
    for key in keys:
        st.session_state.pop(key, None)
        st.session_state.pop(_SHADOW + key, None)


# -- the session's work, kept on disk ---------------------------------------------------------
def sessions_root() -> Path:
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser() if env else default_directory() / "app-sessions"


def _id_of(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()[:32]


def _dir() -> Path | None:
    started = st.session_state.get(_STARTED)
    return None if started is None else sessions_root() / started[1]


def session_id() -> str:
    """This session's public id (recorded in release params as "session"); starts the session
    if needed."""
    start()
    return st.session_state[_STARTED][1]


def start() -> None:
    """Name this Streamlit session by the URL's token (a new one if absent or unknown) and, on
    the session's first run, bring back what a reload of that URL kept. Idempotent."""
    started = st.session_state.get(_STARTED)
    if started is None:
        token = st.query_params.get(TOKEN_PARAM, "")
        notes: list[str] = []
        if token and not _TOKEN_RE.match(token):
            token = ""
        if token:
            directory = sessions_root() / _id_of(token)
            if directory.is_dir():
                notes = _restore(directory)
            else:
                notes = [
                    "This link's earlier session is no longer kept on the server (sessions "
                    f"are kept {MAX_AGE_S // 3600} hours after their last use): its uploads "
                    "and results are gone; releases it made are on the Releases page."
                ]
        else:
            token = secrets.token_urlsafe(24)
        started = (token, _id_of(token))
        st.session_state[_STARTED] = started
        st.session_state[_RESTORE_NOTES] = notes
        _prune(sessions_root(), keep=started[1])
    _LIVE[started[1]] = time.time()
    if st.query_params.get(TOKEN_PARAM) != started[0]:
        st.query_params[TOKEN_PARAM] = started[0]  # navigation between pages drops it


def is_live(session: str) -> bool:
    """Has the session `session` (a public id) run in this server process recently? Its
    releases may be on its screen, or still being built."""
    last = _LIVE.get(session)
    return last is not None and time.time() - last < LIVE_S


def restore_notes() -> list[str]:
    """What the last reload could not bring back, in words (empty after a clean restore)."""
    return list(st.session_state.get(_RESTORE_NOTES, []))


def clear_restore_notes() -> None:
    st.session_state[_RESTORE_NOTES] = []


def put(key: str, value, label: str) -> None:
    """Keep `value` as this session's work under `key` (in memory and on disk). `label` names it
    in words, for the note shown when it could not be kept ("the uploaded file x.csv")."""
    st.session_state[key] = value
    directory = _dir()
    if directory is None:
        return
    path = _work_path(directory, key)
    try:
        data = pickle.dumps((key, label, value), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - an object that cannot be kept is said lost, not fatal
        _note_lost(directory, key, f"{label} (it cannot be stored)")
        return
    used = _size(directory) - (path.stat().st_size if path.exists() else 0)
    if used + len(data) > MAX_SESSION_BYTES:
        path.unlink(missing_ok=True)
        _note_lost(
            directory, key, f"{label} (over the {MAX_SESSION_BYTES // 2**20} MB kept per session)"
        )
        return
    _write(path, data)
    _note_lost(directory, key, None)


def get(key: str, default=None):
    return st.session_state.get(key, default)


def current(key: str, kind: type, request: type):
    """The work kept under `key` when it is a `kind` holding a typed `request` of type `request`
    (what a page's kept result is made with, issue 28); None when nothing is kept. A value kept
    (on disk) by an older page version, of another class shape, is dropped, not shown."""
    value = st.session_state.get(key)
    if value is None:
        return None
    if isinstance(value, kind) and isinstance(getattr(value, "request", None), request):
        return value
    drop(key)
    return None


def drop(*keys: str) -> None:
    """Forget pieces of work (in memory and on disk)."""
    directory = _dir()
    for key in keys:
        st.session_state.pop(key, None)
        if directory is not None:
            _work_path(directory, key).unlink(missing_ok=True)


def mark_shown(release_ids: Iterable[int | None]) -> None:
    """Record that this session has shown these registry releases (the rest of its releases
    are listed as "charged, not shown")."""
    ids = {int(i) for i in release_ids if i is not None}
    shown = set(st.session_state.get(_SHOWN, ()))
    if not ids <= shown:
        put(_SHOWN, frozenset(shown | ids), "the list of releases shown")


def shown() -> frozenset[int]:
    return frozenset(st.session_state.get(_SHOWN, ()))


def shown_by(session: str) -> frozenset[int] | None:
    """The releases another session (by its public id) has shown, or None if it is not kept."""
    if not re.fullmatch(r"[0-9a-f]{32}", session or ""):
        return None
    path = _work_path(sessions_root() / session, _SHOWN)
    try:
        return frozenset(pickle.loads(path.read_bytes())[2])
    except (OSError, pickle.UnpicklingError, EOFError, IndexError, TypeError):
        return None


def save_widgets() -> None:
    """Write the widget shadows if they changed since the last write (end of every run)."""
    directory = _dir()
    if directory is None:
        return
    values = {}
    for key in list(st.session_state.keys()):
        if isinstance(key, str) and key.startswith(_SHADOW):
            try:
                pickle.dumps(st.session_state[key])
            except Exception:  # noqa: BLE001 - skip what cannot be kept
                continue
            values[key] = st.session_state[key]
    data = pickle.dumps(values, protocol=pickle.HIGHEST_PROTOCOL)
    digest = hashlib.sha256(data).hexdigest()
    if st.session_state.get(_SAVED) == digest and (directory / WIDGETS_FILE).exists():
        return
    _write(directory / WIDGETS_FILE, data)
    st.session_state[_SAVED] = digest


# -- files -----------------------------------------------------------------------------------
def _work_path(directory: Path, key: str) -> Path:
    return directory / "work" / (hashlib.sha256(key.encode()).hexdigest()[:24] + ".pkl")


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.suppress(OSError):
        os.chmod(sessions_root(), 0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)  # a full disk: the work stays in memory only
        return
    with contextlib.suppress(OSError):
        os.utime(path.parents[1] if path.parent.name == "work" else path.parent)


def _size(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.rglob("*.pkl") if p.is_file())


def _note_lost(directory: Path, key: str, label: str | None) -> None:
    path = directory / LOST_FILE
    try:
        lost = pickle.loads(path.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError):
        lost = {}
    if label is None and key not in lost:
        return
    if label is None:
        lost.pop(key)
    else:
        lost[key] = label
    _write(path, pickle.dumps(lost))


def _restore(directory: Path) -> list[str]:
    """Load the kept widget shadows and work into `st.session_state`; return notes on what
    could not be brought back."""
    notes = []
    with contextlib.suppress(OSError, pickle.UnpicklingError, EOFError):
        for key, value in pickle.loads((directory / WIDGETS_FILE).read_bytes()).items():
            st.session_state.setdefault(key, value)
    for path in sorted((directory / "work").glob("*.pkl")):
        try:
            key, _label, value = pickle.loads(path.read_bytes())
        except Exception:  # noqa: BLE001 - a file written by another version: say it is lost
            notes.append("a result kept by an older version of the app")
            continue
        st.session_state[key] = value
    with contextlib.suppress(OSError, pickle.UnpicklingError, EOFError):
        lost = pickle.loads((directory / LOST_FILE).read_bytes())
        notes += [f"Not kept across the reload: {label}." for label in lost.values()]
    return notes


def _prune(root: Path, keep: str) -> None:
    """Delete sessions untouched for MAX_AGE_S, and the oldest beyond MAX_SESSIONS."""
    try:
        dirs = [d for d in root.iterdir() if d.is_dir() and d.name != keep]
    except OSError:
        return
    now = time.time()
    aged = sorted(dirs, key=lambda d: d.stat().st_mtime, reverse=True)
    for i, d in enumerate(aged):
        if i >= MAX_SESSIONS - 1 or now - d.stat().st_mtime > MAX_AGE_S:
            shutil.rmtree(d, ignore_errors=True)
