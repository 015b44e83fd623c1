"""The registry's versioned schema: ordered migrations, each applied once in its own immediate
transaction (split from `core.registry.store`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from core.errors import InputError

APPLICATION_ID = 0x44505845  # "DPXE" in the SQLite header: this file is a DP Explorer registry


def _run_script(con: sqlite3.Connection, script: str) -> None:
    """Run `;`-separated DDL inside the caller's transaction (`executescript` would commit)."""
    for statement in script.split(";"):
        if statement.strip():
            con.execute(statement)


def _v1(con: sqlite3.Connection) -> None:
    _run_script(
        con,
        """
        CREATE TABLE datasets (
            name TEXT PRIMARY KEY,
            epsilon_total REAL NOT NULL,
            delta_total REAL NOT NULL,
            max_epsilon_per_query REAL,
            max_delta_per_query REAL,
            uid TEXT,
            teaching INTEGER NOT NULL DEFAULT 0,
            created TEXT NOT NULL
        );
        CREATE TABLE table_files (
            dataset TEXT NOT NULL REFERENCES datasets(name),
            name TEXT NOT NULL,
            path TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            public INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (dataset, name)
        );
        CREATE TABLE releases (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            time TEXT NOT NULL,
            tool TEXT NOT NULL,
            dataset TEXT REFERENCES datasets(name),
            kind TEXT NOT NULL,
            status TEXT NOT NULL,
            params TEXT NOT NULL,
            mechanisms TEXT NOT NULL,
            epsilon REAL NOT NULL,
            delta REAL NOT NULL,
            mode TEXT NOT NULL,
            privacy TEXT NOT NULL DEFAULT '{}',
            artefact_sha256 TEXT,
            artefact TEXT,
            note TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX releases_by_dataset ON releases(dataset, kind);
        CREATE TABLE refusals (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            time TEXT NOT NULL,
            tool TEXT NOT NULL,
            dataset TEXT,
            reason TEXT NOT NULL,
            params TEXT NOT NULL
        );
        CREATE TABLE budget_changes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            time TEXT NOT NULL,
            dataset TEXT NOT NULL REFERENCES datasets(name),
            epsilon_before REAL NOT NULL,
            epsilon_after REAL NOT NULL,
            delta_before REAL NOT NULL,
            delta_after REAL NOT NULL
        );
        """,
    )


def _v2(con: sqlite3.Connection) -> None:
    """Datasets state their unit (`row_is_unit`) and PP's publishable columns; a release
    records the process that charged it (to list charges never delivered); location
    histograms are one tool, "location", with the method as a parameter."""
    _run_script(
        con,
        """
        ALTER TABLE datasets ADD COLUMN row_is_unit INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE datasets ADD COLUMN publishable TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE releases ADD COLUMN worker TEXT NOT NULL DEFAULT '';
        UPDATE releases SET params = json_set(params, '$.method', tool), tool = 'location'
            WHERE tool NOT IN ('sql', 'pp', 'location');
        UPDATE refusals SET params = json_set(params, '$.method', tool), tool = 'location'
            WHERE tool NOT IN ('sql', 'pp', 'location')
        """,
    )


def _v3(con: sqlite3.Connection) -> None:
    """Budget plans (issue 21): the releases a data owner intends for a dataset, saved as one
    row per plan. Saving a plan charges nothing; releases are compared with it later.
    `after_release` is the last release id when the plan was saved: the releases it governs
    are those recorded after it (timestamps have one-second resolution)."""
    _run_script(
        con,
        """
        CREATE TABLE plans (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            time TEXT NOT NULL,
            dataset TEXT NOT NULL REFERENCES datasets(name),
            name TEXT NOT NULL,
            items TEXT NOT NULL,
            epsilon REAL NOT NULL,
            delta REAL NOT NULL,
            note TEXT NOT NULL DEFAULT '',
            after_release INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX plans_by_dataset ON plans(dataset)
        """,
    )


def _v4(con: sqlite3.Connection) -> None:
    """Declared public facts (issue 27): each table file's `TableSchema` as JSON, stated (or
    confirmed) by the owner at registration, and every later edit with its before and after.
    Datasets registered before v4 get no row: the migration cannot read files safely, so a
    missing schema stays missing (its consumer proposes one, labelled inferred). Restores are
    recorded per dataset (issue 27 item 5): the backup, its SHA-256, and the spend and totals
    of the registry replaced and of the backup. `restores.dataset` has no foreign key: a
    dataset the backup lacks keeps the record of its spend disappearing."""
    _run_script(
        con,
        """
        CREATE TABLE table_schemas (
            dataset TEXT NOT NULL,
            name TEXT NOT NULL,
            schema TEXT NOT NULL,
            PRIMARY KEY (dataset, name),
            FOREIGN KEY (dataset, name) REFERENCES table_files(dataset, name)
        );
        CREATE TABLE schema_changes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            time TEXT NOT NULL,
            dataset TEXT NOT NULL REFERENCES datasets(name),
            table_name TEXT NOT NULL,
            before TEXT,
            after TEXT NOT NULL,
            note TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX schema_changes_by_dataset ON schema_changes(dataset);
        CREATE TABLE restores (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            time TEXT NOT NULL,
            dataset TEXT NOT NULL,
            backup TEXT NOT NULL,
            backup_sha256 TEXT NOT NULL,
            epsilon_total_before REAL,
            epsilon_total_after REAL,
            delta_total_before REAL,
            delta_total_after REAL,
            epsilon_spent_before REAL,
            delta_spent_before REAL,
            epsilon_spent_after REAL,
            delta_spent_after REAL,
            note TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX restores_by_dataset ON restores(dataset)
        """,
    )


def _v5(con: sqlite3.Connection) -> None:
    """Accounting (issue 33): each dataset states how its releases compose, `basic` (every
    dataset registered before v5, as they were charged) or `pld`; the owner's choice and every
    change (allowed only before the first release) are recorded in `accounting_changes`.
    Idempotent: a registry whose version rows were lowered by hand keeps its column and table."""
    columns = {row[1] for row in con.execute("PRAGMA table_info(datasets)")}
    if "accounting" not in columns:
        con.execute("ALTER TABLE datasets ADD COLUMN accounting TEXT NOT NULL DEFAULT 'basic'")
    _run_script(
        con,
        """
        CREATE TABLE IF NOT EXISTS accounting_changes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            time TEXT NOT NULL,
            dataset TEXT NOT NULL REFERENCES datasets(name),
            before TEXT,
            after TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS accounting_changes_by_dataset ON accounting_changes(dataset)
        """,
    )


def _v6(con: sqlite3.Connection) -> None:
    """Per-analyst shares (issue 33): the owner gives a named analyst a share (ε, δ) of a
    dataset's budget (`analyst_shares`, every change in `share_changes`); each release records
    the analyst it was charged to (`releases.analyst`, NULL for the owner and for releases
    before v6). Idempotent like v5."""
    columns = {row[1] for row in con.execute("PRAGMA table_info(releases)")}
    if "analyst" not in columns:
        con.execute("ALTER TABLE releases ADD COLUMN analyst TEXT")
    _run_script(
        con,
        """
        CREATE TABLE IF NOT EXISTS analyst_shares (
            dataset TEXT NOT NULL REFERENCES datasets(name),
            analyst TEXT NOT NULL,
            epsilon REAL NOT NULL,
            delta REAL NOT NULL,
            PRIMARY KEY (dataset, analyst)
        );
        CREATE TABLE IF NOT EXISTS share_changes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            time TEXT NOT NULL,
            dataset TEXT NOT NULL REFERENCES datasets(name),
            analyst TEXT NOT NULL,
            epsilon_before REAL,
            epsilon_after REAL NOT NULL,
            delta_before REAL,
            delta_after REAL NOT NULL
        );
        CREATE INDEX IF NOT EXISTS releases_by_analyst ON releases(dataset, analyst)
        """,
    )


def _v7(con: sqlite3.Connection) -> None:
    """Artefacts stored by need (issue 29, `core.registry.storage`): `artefact` may now hold a
    compressed BLOB (older rows keep their JSON text and still read); `artefact_bytes` is the
    size of the artefact's canonical JSON (NULL before v7), `artefact_note` why its body is
    not kept ("not kept: demo run", or a prune); every prune is a row of `prunes`.
    Idempotent like v5."""
    columns = {row[1] for row in con.execute("PRAGMA table_info(releases)")}
    if "artefact_bytes" not in columns:
        con.execute("ALTER TABLE releases ADD COLUMN artefact_bytes INTEGER")
    if "artefact_note" not in columns:
        con.execute("ALTER TABLE releases ADD COLUMN artefact_note TEXT NOT NULL DEFAULT ''")
    _run_script(
        con,
        """
        CREATE TABLE IF NOT EXISTS prunes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            time TEXT NOT NULL,
            older_than TEXT NOT NULL,
            kinds TEXT NOT NULL,
            runs INTEGER NOT NULL,
            stored_bytes INTEGER NOT NULL
        )
        """,
    )


# Ordered migrations: MIGRATIONS[i] brings the schema from version i to version i + 1.
MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (
    _v1, _v2, _v3, _v4, _v5, _v6, _v7,
)  # fmt: skip


def schema_version(con: sqlite3.Connection) -> int:
    row = con.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def migrate(con: sqlite3.Connection) -> None:
    """Apply the missing migrations, each in its own immediate transaction."""
    con.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY)")
    while True:
        con.execute("BEGIN IMMEDIATE")
        try:
            version = schema_version(con)
            if version > len(MIGRATIONS):
                raise InputError(
                    f"the registry's schema version {version} is newer than this dpx "
                    f"understands ({len(MIGRATIONS)}). Fix: upgrade DP Explorer."
                )
            if version == len(MIGRATIONS):
                if con.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
                    con.execute(f"PRAGMA application_id = {APPLICATION_ID}")  # older registries
                con.execute("COMMIT")
                return
            MIGRATIONS[version](con)
            con.execute("INSERT INTO schema_version(version) VALUES (?)", (version + 1,))
            con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
