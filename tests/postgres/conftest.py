"""One PostgreSQL server per test session (tests/postgres/server.py); the PostgreSQL tests
skip LOUDLY only when the server binaries truly cannot be had (or, as root, no user to run
them as)."""

from __future__ import annotations

import sys

import pytest

from tests.postgres.server import Server, unavailable_reason


@pytest.fixture(scope="session")
def postgres():
    reason = unavailable_reason()
    if reason is not None:
        message = f"!!! POSTGRESQL TESTS SKIPPED: {reason} !!!"
        print(f"\n{message}", file=sys.stderr)
        pytest.skip(message)
    server = Server()
    yield server
    server.stop()
