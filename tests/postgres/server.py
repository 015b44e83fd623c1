"""A throwaway PostgreSQL server for tests: Debian's server binaries (initdb, pg_ctl under
/usr/lib/postgresql/*/bin), a data directory and a private Unix socket directory in a temp dir,
no TCP listener. PostgreSQL refuses to run as root, so as root the server runs as the
`postgres` system user (Debian's package creates it) via runuser. Queries go through `psql`
(the client package), with results as JSON: no Python driver needed."""

from __future__ import annotations

import glob
import json
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pandas as pd

TIMEOUT_S = 300  # only against hangs; no test asserts a duration


def find_bin() -> Path | None:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4])
    )
    return Path(found[-1]).parent if found and shutil.which("psql") else None


def unavailable_reason() -> str | None:
    if find_bin() is None:
        return "no PostgreSQL server binaries (apt-get install postgresql)"
    if os.geteuid() == 0 and not _user_exists("postgres"):
        return "running as root and there is no 'postgres' user to run the server as"
    if os.geteuid() == 0 and not shutil.which("runuser"):
        return "running as root and runuser is missing"
    return None


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


PG_TYPES = {
    "BIGINT": "BIGINT",
    "INTEGER": "INTEGER",
    "DOUBLE": "DOUBLE PRECISION",
    "VARCHAR": "TEXT",
    "DATE": "DATE",
    "BOOLEAN": "BOOLEAN",
}


class Server:
    def __init__(self) -> None:
        self.bin = find_bin()
        self.root = Path(tempfile.mkdtemp(prefix="dpx-pg-"))
        self.data, self.sock = self.root / "data", self.root / "sock"
        self.sock.mkdir()
        self.port = _free_port()
        self.as_user: list[str] = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            for path in (self.root, self.sock):
                os.chown(path, user.pw_uid, user.pw_gid)
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self._server(
            "initdb", "-D", str(self.data), "-U", "dpx", "--auth=trust", "-E", "UTF8",
            "--no-locale", "--no-sync",
        )  # fmt: skip
        options = f"-p {self.port} -k {self.sock} -c listen_addresses='' -c fsync=off"
        self._server(
            "pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.root / "log"),
            "-w", "start",
        )  # fmt: skip

    def _server(self, tool: str, *args: str) -> None:
        subprocess.run(
            [*self.as_user, str(self.bin / tool), *args],
            check=True,
            capture_output=True,
            timeout=TIMEOUT_S,
            cwd=self.root,
        )

    def psql(self, sql: str) -> str:
        """Run `sql` with psql (stop on the first error); raises with PostgreSQL's message."""
        done = subprocess.run(
            ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", str(self.sock),
             "-p", str(self.port), "-U", "dpx", "-d", "postgres"],
            input=sql, capture_output=True, text=True, timeout=TIMEOUT_S,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip())
        return done.stdout

    def load(self, name: str, frame: pd.DataFrame, types: list[str]) -> None:
        """Create table `name` with the DuckDB `types` of `frame` and copy its rows in."""
        columns = ", ".join(
            f'"{c}" {PG_TYPES[t]}' for c, t in zip(frame.columns, types, strict=True)
        )
        path = self.root / f"{name}.csv"
        frame.to_csv(path, index=False)  # NULL/NaN: an empty unquoted field = NULL in COPY
        self.psql(
            f'CREATE TABLE "{name}" ({columns});\n'
            f"\\copy \"{name}\" FROM '{path}' WITH (FORMAT csv, HEADER true)\n"
        )

    def frame(self, sql: str) -> pd.DataFrame:
        """The rows of a SELECT (typed through JSON: numbers, text, arrays)."""
        body = sql.strip().rstrip(";")
        out = self.psql(f"SELECT COALESCE(json_agg(row_to_json(q)), '[]') FROM ({body}) AS q;")
        rows = json.loads(out)
        return pd.DataFrame(rows, dtype=object) if rows else pd.DataFrame()

    def stop(self) -> None:
        try:
            self._server("pg_ctl", "-D", str(self.data), "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
