"""Test-wide setup: run from the repository root so `pages` and `app.py` resolve, and point
the release registry at a temporary directory so no test ever writes to the real `~/.dpx`."""

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
os.chdir(ROOT)
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Set at import time (before any test module or subprocess can read it) and inherited by every
# `dpx` / streamlit subprocess the tests start.
_SESSION_REGISTRY = tempfile.mkdtemp(prefix="dpx-test-registry-")
os.environ["DPX_REGISTRY"] = _SESSION_REGISTRY
# `dpx` turns an unexpected exception into one "internal error" line; tests must see it instead.
os.environ.setdefault("DPX_DEBUG", "1")
os.environ.pop("DPX_MODE", None)  # owner unless a test sets the analyst role itself


@pytest.fixture(autouse=True, scope="session")
def _temporary_registry():
    """Session-wide: `DPX_REGISTRY` is a temporary directory, removed at the end."""
    os.environ["DPX_REGISTRY"] = _SESSION_REGISTRY
    yield Path(_SESSION_REGISTRY)
    shutil.rmtree(_SESSION_REGISTRY, ignore_errors=True)


@pytest.fixture
def registry_dir(tmp_path, monkeypatch) -> Path:
    """A fresh, empty registry directory for one test (also set as `DPX_REGISTRY`)."""
    directory = tmp_path / "registry"
    monkeypatch.setenv("DPX_REGISTRY", str(directory))
    return directory
