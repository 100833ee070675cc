"""The session database's schema in PostgreSQL, as numbered migrations.

`deepacp_schema_version` lists the versions applied. `migrate` runs when a process first
connects, in one transaction under an advisory lock, so two processes starting at once
apply each step exactly once (the second waits, then finds nothing left to do). Migrations
are only ever appended: version N is `MIGRATIONS[N - 1]`.
"""

from __future__ import annotations

from typing import Any

from deepacp.session.storage.records import FIRST_COLUMNS

MIGRATION_LOCK = "deepacp.migrations"
"""The advisory lock (by name, hashed to a key) held while a schema changes."""

VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS deepacp_schema_version (
    version INTEGER PRIMARY KEY,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
)
"""

MIGRATIONS: tuple[str, ...] = (
    f"CREATE TABLE deepacp_sessions ({FIRST_COLUMNS}, effort TEXT);"
    "CREATE INDEX deepacp_sessions_by_cwd ON deepacp_sessions (cwd, updated_at DESC)",
    "ALTER TABLE deepacp_sessions ADD COLUMN goal TEXT",
)

LATEST = len(MIGRATIONS)

LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))"


def migrate(conn: Any) -> int:
    """Bring the schema up to `LATEST` on a psycopg connection; returns the version."""
    with conn.transaction():
        conn.execute(LOCK_SQL, (MIGRATION_LOCK,))
        conn.execute(VERSION_TABLE)
        current = _version(conn)
        for version in range(current + 1, LATEST + 1):
            conn.execute(MIGRATIONS[version - 1])
            conn.execute("INSERT INTO deepacp_schema_version (version) VALUES (%s)", (version,))
    return max(current, LATEST)


def schema_version(conn: Any) -> int:
    """The version a database is at (0: deepacp never migrated it)."""
    (exists,) = conn.execute("SELECT to_regclass('deepacp_schema_version') IS NOT NULL").fetchone()
    return _version(conn) if exists else 0


def _version(conn: Any) -> int:
    (version,) = conn.execute(
        "SELECT coalesce(max(version), 0) FROM deepacp_schema_version"
    ).fetchone()
    return int(version)
