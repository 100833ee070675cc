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


def _open_at(home, barrier, failures) -> None:
    barrier.wait()
    try:
        SessionStore(home)._db  # noqa: B018 (opening is what migrates)
    except Exception as exc:  # reported to the parent, which asserts on it
        failures.put(f"{type(exc).__name__}: {exc}")


def test_processes_opening_an_old_database_at_once_each_open_it(tmp_path):
    """deepacp processes started together (an editor restoring several chats) on a
    sessions.db from before a column: one adds the columns, the others find them added."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")  # forking a threaded test process can hang
    failures = context.Queue()
    for round_ in range(2):
        home = tmp_path / f"home{round_}"
        home.mkdir(mode=0o700)
        db = sqlite3.connect(home / "sessions.db")
        db.execute(OLD_SCHEMA)
        db.commit()
        db.close()
        barrier = context.Barrier(5)
        racers = [
            context.Process(target=_open_at, args=(home, barrier, failures)) for _ in range(5)
        ]
        for racer in racers:
            racer.start()
        for racer in racers:
            racer.join(25)
        assert [racer.exitcode for racer in racers] == [0] * len(racers)
    reported = []
    while not failures.empty():
        reported.append(failures.get())
    assert reported == []


def test_a_database_held_by_another_process_is_not_called_broken(tmp_path, monkeypatch):
    """A lock that outlasts the wait is said as a lock: moving the file aside, the advice
    for a corrupt one, would lose every session in it."""
    from deepacp.errors import StoreError
    from deepacp.session.storage import sqlite as store_module

    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    holder = sqlite3.connect(home / "sessions.db")
    holder.execute(OLD_SCHEMA)
    holder.commit()
    holder.execute("BEGIN EXCLUSIVE")
    monkeypatch.setattr(store_module, "BUSY_WAIT", 0.1)
    said = ""
    try:
        SessionStore(home)._db  # noqa: B018
    except StoreError as exc:
        said = str(exc)
    finally:
        holder.rollback()
        holder.close()
    assert "locked" in said and "nothing is lost" in said and "mv " not in said
    assert SessionStore(home)._db is not None  # and once free, it opens
