"""Sessions in PostgreSQL: migrations, records shared by two homes, advisory-lock fencing,
and clear errors when the database cannot be used (against a real server)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from deepacp import secrets
from deepacp.errors import SessionInUse, StoreError
from deepacp.session.storage import migrations, open_store
from deepacp.session.storage.records import Store
from deepacp.session.storage.sqlite import SessionStore

psycopg = pytest.importorskip("psycopg")


@pytest.fixture(autouse=True)
def own_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """A store registers its URL's password for the process: keep it to this test."""
    monkeypatch.setattr(secrets, "_REGISTERED", set())


@pytest.fixture
async def stores(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[Store, Store]]:
    """Two homes on the same database, as two machines would be; closed after the test."""
    monkeypatch.setenv("DEEPACP_DATABASE_URL", postgres_url)
    first, second = open_store(tmp_path / "a"), open_store(tmp_path / "b")
    try:
        yield first, second
    finally:
        await first.close()
        await second.close()


def versions(url: str) -> list[int]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT version FROM deepacp_schema_version ORDER BY 1").fetchall()
    return [v for (v,) in rows]


def test_migrations_are_versioned_and_run_once(postgres_url: str) -> None:
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        assert migrations.schema_version(conn) == 0
        assert migrations.migrate(conn) == migrations.LATEST
        assert migrations.migrate(conn) == migrations.LATEST  # again: nothing to do
        assert migrations.schema_version(conn) == migrations.LATEST
        conn.execute("SELECT id, effort FROM deepacp_sessions")
    assert versions(postgres_url) == list(range(1, migrations.LATEST + 1))


def test_two_processes_migrating_at_once_apply_each_step_once(postgres_url: str) -> None:
    start = threading.Barrier(4)
    results: list[int | BaseException] = []

    def migrate() -> None:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            start.wait()
            try:
                results.append(migrations.migrate(conn))
            except BaseException as exc:
                results.append(exc)

    threads = [threading.Thread(target=migrate) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [migrations.LATEST] * 4
    assert versions(postgres_url) == list(range(1, migrations.LATEST + 1))


async def test_two_stores_set_up_the_checkpoint_tables_at_once(stores: tuple[Store, Store]) -> None:
    first, second = stores
    savers = await asyncio.gather(first.checkpointer(), second.checkpointer())
    assert all(s is not None for s in savers)


async def test_two_homes_share_sessions_and_fence_them(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "config.toml").write_text(f'database = "{postgres_url}"\n')
    monkeypatch.setenv("DEEPACP_DATABASE_URL", postgres_url)
    machine_a = open_store(tmp_path / "a")
    monkeypatch.delenv("DEEPACP_DATABASE_URL")
    machine_b = open_store(tmp_path / "b")  # the same database, from its config.toml
    try:
        record = machine_a.create("/work/repo", "ask", "scripted:x", "high", "tests pass")
        machine_a.update(record, title="Fix the bug")
        [listed] = machine_b.list("/work/repo")
        assert (listed.id, listed.title, listed.effort) == (record.id, "Fix the bug", "high")
        assert listed.goal == "tests pass"  # the goal follows the session too
        assert machine_b.list("/elsewhere") == []
        for unknown in ("no-such-session", "\ud800", "a\x00b"):  # none can exist
            assert machine_b.get(unknown) is None

        machine_a.claim(record.id)
        machine_a.claim(record.id)  # again: still ours
        with pytest.raises(SessionInUse, match="open in another deepacp process"):
            machine_b.claim(record.id)
        machine_a.release(record.id)
        machine_b.claim(record.id)
        with pytest.raises(SessionInUse):
            machine_a.claim(record.id)
    finally:
        await machine_a.close()
        await machine_b.close()


async def test_a_lost_connection_drops_its_locks(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that dies holds nothing: PostgreSQL ends its locks with its connection."""
    monkeypatch.setenv("DEEPACP_DATABASE_URL", postgres_url)
    holder, other = open_store(tmp_path / "a"), open_store(tmp_path / "b")
    record = holder.create("/work/repo", "ask", None)
    holder.claim(record.id)
    holder._conn.close()  # as when its process is killed
    try:
        other.claim(record.id)
    finally:
        await other.close()


async def test_a_store_whose_connection_was_cut_connects_again_and_keeps_its_sessions(
    postgres_url: str, stores: tuple[Store, Store]
) -> None:
    holder, other = stores
    record = holder.create("/work/repo", "ask", None)
    holder.claim(record.id)
    with psycopg.connect(postgres_url, autocommit=True) as admin:  # a database restart
        admin.execute("SELECT pg_terminate_backend(%s)", (holder._conn.info.backend_pid,))
    with pytest.raises(StoreError, match="cannot be used"):
        holder.list()  # the request that finds the connection gone fails, in one line
    assert [r.id for r in holder.list()] == [record.id]
    with pytest.raises(SessionInUse):
        other.claim(record.id)  # locked again on the new connection


async def test_deleting_a_session_removes_it_everywhere(stores: tuple[Store, Store]) -> None:
    first, second = stores
    record = first.create("/work/repo", "ask", None)
    await first.delete(record)
    assert second.get(record.id) is None and second.list() == []


async def test_a_fork_copies_the_conversation_and_outlives_its_source(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langgraph.checkpoint.base import empty_checkpoint

    monkeypatch.setenv("DEEPACP_DATABASE_URL", postgres_url)
    first, second = open_store(tmp_path / "a"), open_store(tmp_path / "b")
    try:
        record = first.create("/work/repo", "ask", None, goal="tests pass")
        saver = await first.checkpointer()
        where = {"configurable": {"thread_id": record.thread_id, "checkpoint_ns": ""}}
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"topic": "the bug"}
        await saver.aput(where, checkpoint, {"step": 1}, {})
        forked = await first.fork(record, "fork of Fix the bug")
        assert (forked.title, forked.goal) == ("fork of Fix the bug", "tests pass")
        await first.delete(record)
        other = await second.checkpointer()  # another machine reads the fork
        copy = {"configurable": {"thread_id": forked.thread_id, "checkpoint_ns": ""}}
        found = await other.aget_tuple(copy)
        assert found is not None and found.checkpoint["id"] == checkpoint["id"]
        assert await other.aget_tuple(where) is None
        assert [r.id for r in second.list("/work/repo")] == [forked.id]
    finally:
        await first.close()
        await second.close()


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("postgresql://deepacp:hunter2-secret-pw@127.0.0.1:{port}/deepacp", "cannot be used"),
        ("postgresql://deepacp:hunter2-secret-pw@127.0.0.1:notaport/deepacp", "cannot be used"),
        ("mysql://deepacp:hunter2-secret-pw@127.0.0.1/deepacp", "must start with postgresql://"),
    ],
)
def test_an_unusable_database_is_one_clear_line(
    url: str, says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.postgres import free_port

    monkeypatch.setenv("DEEPACP_DATABASE_URL", url.format(port=free_port()))  # none listens
    store = open_store(tmp_path)
    for use in (store.list, lambda: store.create(str(tmp_path), "ask", None)):
        with pytest.raises(StoreError) as error:
            use()
        message = str(error.value)
        assert says in message and "\n" not in message
        assert "hunter2-secret-pw" not in message
    with pytest.raises(StoreError, match=says):
        asyncio.run(store.checkpointer())


def test_without_a_database_sessions_stay_in_sqlite_and_psycopg_is_not_loaded(
    tmp_path: Path,
) -> None:
    assert isinstance(open_store(tmp_path), SessionStore)
    probe = (
        "import sys; from pathlib import Path; from deepacp.session.storage import open_store; "
        f"open_store(Path({str(tmp_path)!r})); print('psycopg' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip() == "False", done.stderr
