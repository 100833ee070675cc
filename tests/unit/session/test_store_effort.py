"""A session's effort and goal are stored with it, and a sessions.db from before those
columns opens."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from deepacp.session.storage.records import SessionRecord
from deepacp.session.storage.sqlite import SessionStore

OLD_SCHEMA = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, cwd TEXT NOT NULL, thread_id TEXT NOT NULL, title TEXT,
    mode TEXT NOT NULL, model TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL
)
"""


def opened_old(tmp_path: Path, model: str) -> tuple[SessionStore, SessionRecord]:
    """A home whose sessions.db is from before effort and goals, opened: its store, and its
    one session `old` (whose model is `model`, in SQL)."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    db = sqlite3.connect(home / "sessions.db")
    db.execute(OLD_SCHEMA)
    db.execute(f"INSERT INTO sessions VALUES ('old', '/w', 'old', 't', 'ask', {model}, 'a', 'a')")
    db.commit()
    db.close()
    store = SessionStore(home)
    old = store.get("old")
    assert old is not None
    return store, old


async def test_effort_is_kept_and_an_old_database_gains_the_column(tmp_path):
    store, old = opened_old(tmp_path, "'anthropic:c'")
    try:
        assert old.effort is None
        store.update(old, effort="high")
        made = store.create("/w", "ask", "openai:o3", "low")
        assert store.get("old").effort == "high" and store.get(made.id).effort == "low"
        store.update(made, effort="extreme")  # written by a newer version, say
        assert store.get(made.id).effort is None
    finally:
        await store.close()


async def test_a_goal_is_kept_and_old_sessions_have_none(tmp_path):
    store, old = opened_old(tmp_path, "NULL")
    try:
        assert old.goal is None
        store.update(old, goal="the tests pass")
    finally:
        await store.close()
    reopened = SessionStore(tmp_path / "home")  # a restart
    try:
        assert reopened.get("old").goal == "the tests pass"
        reopened.update(reopened.get("old"), goal=None)
        assert reopened.get("old").goal is None
    finally:
        await reopened.close()
