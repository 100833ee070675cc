"""The saver's kept message history: every load with it gives what a saver without it
reads from the database, through turns, approvals, a cancel, rewind, fork, clear, delete
and another process continuing the thread; and what is kept stays bounded."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph

from deepacp.harness.state import DeepAgentState, read_messages
from deepacp.models import resolve_model
from deepacp.session.lifecycle import SessionManager, Workspace
from deepacp.session.parts.restore import RestorePart
from deepacp.session.storage import checkpoints, open_store
from deepacp.session.storage.checkpoints import HistoryCache, with_history_cache


class Face:
    """Allows everything, or, while `hold` is set, keeps a permission asked until cancelled."""

    def __init__(self) -> None:
        self.hold = False
        self.asked = asyncio.Event()

    async def emit(self, event: Any) -> None:
        pass

    async def ask_permission(self, request: Any) -> str:
        self.asked.set()
        if self.hold:
            await asyncio.Event().wait()
        return "allow_once"

    async def ask(self, question: Any) -> None:
        return None


def call(name: str, i: int, **args: Any) -> dict[str, Any]:
    return {"id": f"{name}{i}", "name": name, "args": args}


SCRIPT = [
    # 1: two calls at once (two tasks writing in one step), then the answer
    {
        "content": "looking",
        "tool_calls": [call("ls", 1, path=""), call("read_file", 1, file_path="a.txt")],
    },
    {"content": "one"},
    # 2: a write the user approves (an interrupt, then a resumed run)
    {"content": "writing", "tool_calls": [call("write_file", 2, file_path="b.txt", content="b\n")]},
    {"content": "two"},
    # 3, 4: plain answers
    {"content": "three"},
    {"content": "four"},
    # 5 (after rewinding to 3): an answer
    {"content": "five"},
    # 6: a write held at its approval, then cancelled (the thread is repaired)
    {"content": "writing", "tool_calls": [call("write_file", 6, file_path="c.txt", content="c\n")]},
    # 7, 8, 9: answers (the fork's turn, then after the cancel, then after clear)
    {"content": "seven"},
    {"content": "eight"},
    {"content": "nine"},
]


@pytest.fixture(params=["sqlite", "postgres"])
def stored(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[[], Any]:
    """Sessions live in SQLite under `tmp_path / "home"`, or in PostgreSQL; the factory
    opens a saver on the same database that keeps nothing (reads what is stored)."""
    if request.param == "sqlite":

        @contextlib.asynccontextmanager
        async def sqlite_saver() -> AsyncIterator[Any]:
            import aiosqlite
            from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

            async with aiosqlite.connect(tmp_path / "home" / "checkpoints.db") as conn:
                yield AsyncSqliteSaver(conn)

        return sqlite_saver
    pytest.importorskip("psycopg")
    url = request.getfixturevalue("postgres_url")
    monkeypatch.setenv("DEEPACP_DATABASE_URL", url)
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    return lambda: AsyncPostgresSaver.from_conn_string(url)


async def assert_same_as_stored(session: Any, plain: Any, thread_id: str | None = None) -> None:
    config = {"configurable": {"thread_id": thread_id or session.record.thread_id}}
    stored = await read_messages(plain, config)
    kept = await read_messages(await session.ctx.records.checkpointer(), config)
    assert kept == stored and [m.id for m in kept] == [m.id for m in stored]
    if thread_id is None:
        state = await (await session.graph()).aget_state(session.ctx.config)
        assert state.values.get("messages", []) == stored


async def test_loads_with_the_kept_history_equal_loads_without_it(
    stored: Callable[[], Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[bool] = []  # per load of a thread's messages: was it read whole?
    since_kept = HistoryCache._since_kept

    async def counted(self: Any, thread_id: str, target: str) -> Any:
        messages = await since_kept(self, thread_id, target)
        loads.append(messages is None)
        return messages

    monkeypatch.setattr(HistoryCache, "_since_kept", counted)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a\n")
    (tmp_path / "script.json").write_text(json.dumps({"turns": SCRIPT}))
    model = f"scripted:{tmp_path / 'script.json'}"
    manager = SessionManager(open_store(tmp_path / "home"), resolve_model)
    await manager.store.checkpointer()  # the database exists
    face = Face()
    try:
        async with stored() as plain:
            record = manager.new_record(str(workspace), "ask", model)
            session = manager.open(record, Workspace(str(workspace)), face)
            for prompt in ("one", "two", "three", "four"):
                assert await session.prompt(prompt) == "end_turn"
                await assert_same_as_stored(session, plain)
            assert (workspace / "b.txt").read_text() == "b\n"  # the approved write ran

            # back to before "three": the conversation as it was
            await session.part(RestorePart).rewind(3)
            await assert_same_as_stored(session, plain)
            assert await session.prompt("five") == "end_turn"
            await assert_same_as_stored(session, plain)

            face.hold = True
            face.asked.clear()
            turn = asyncio.create_task(session.prompt("six"))
            await face.asked.wait()
            await session.cancel()
            assert await turn == "cancelled"
            face.hold = False
            await assert_same_as_stored(session, plain)  # the unanswered call was answered

            forked_record = await session.part(RestorePart).fork()
            forked = manager.open(forked_record, Workspace(str(workspace)), Face())
            await assert_same_as_stored(forked, plain)
            assert await forked.prompt("seven") == "end_turn"
            await assert_same_as_stored(forked, plain)
            await assert_same_as_stored(session, plain)  # the fork's turn is not the original's
            assert await session.prompt("eight") == "end_turn"
            await assert_same_as_stored(session, plain)

            old = session.record.thread_id
            await session.clear()
            await assert_same_as_stored(session, plain, thread_id=old)  # gone for both
            assert await session.prompt("nine") == "end_turn"
            await assert_same_as_stored(session, plain)

            await manager.delete(forked_record.id)
            await assert_same_as_stored(session, plain, thread_id=forked_record.thread_id)
    finally:
        await manager.shutdown()
    # Read whole: a thread's first load, the rewound, forked and cleared ones, and what
    # the test reads of deleted threads; every other load rebuilt only its last steps.
    assert 0 < loads.count(True) <= 10 < loads.count(False)


async def test_a_cancel_while_one_of_two_calls_runs_is_read_as_stored(
    stored: Callable[[], Any], tmp_path: Path
) -> None:
    """The finished call's result is pending on the checkpoint when the turn stops, so
    the repair makes a checkpoint holding its own copy of the history: later loads start
    from that copy, not from the writes before it."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    calls = [call("ls", 1, path=""), call("execute", 1, command="sleep 60")]
    turns = [{"content": "one"}, {"content": "both", "tool_calls": calls}, {"content": "three"}]
    (tmp_path / "script.json").write_text(json.dumps({"turns": turns}))
    manager = SessionManager(open_store(tmp_path / "home"), resolve_model)
    await manager.store.checkpointer()  # the database exists
    try:
        async with stored() as plain:
            record = manager.new_record(
                str(workspace), "yolo", f"scripted:{tmp_path / 'script.json'}"
            )
            session = manager.open(record, Workspace(str(workspace)), Face())
            assert await session.prompt("one") == "end_turn"
            await assert_same_as_stored(session, plain)  # kept from here
            turn = asyncio.create_task(session.prompt("two"))
            config = {"configurable": {"thread_id": record.thread_id}}
            while not any(  # the listing is done and saved; the command still runs
                _is_tool_answer(w) for w in ((await plain.aget_tuple(config)).pending_writes or ())
            ):
                await asyncio.sleep(0.05)
            await session.cancel()
            assert await turn == "cancelled"
            await assert_same_as_stored(session, plain)
            assert await session.prompt("three") == "end_turn"
            await assert_same_as_stored(session, plain)
            answers = [
                m.content
                for m in await read_messages(await manager.store.checkpointer(), config)
                if m.type == "tool"
            ]
            assert len(answers) == 2 and "Cancelled" in answers[1]
    finally:
        await manager.shutdown()


def _is_tool_answer(write: tuple) -> bool:
    """A pending write of a tool's answer. (The turn's own input is a pending write of
    `messages` too: a cancel landing then stops the turn before the model is asked, and
    the next prompt would get this turn's scripted calls.)"""
    _, channel, value = write
    values = value if isinstance(value, list) else [value]
    return channel == "messages" and any(getattr(m, "type", None) == "tool" for m in values)


async def test_another_process_continuing_the_thread_is_read_as_stored(
    stored: Callable[[], Any], tmp_path: Path
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    turns = [{"content": f"answer {i}"} for i in range(6)]
    (tmp_path / "script.json").write_text(json.dumps({"turns": turns}))
    model = f"scripted:{tmp_path / 'script.json'}"
    ours = SessionManager(open_store(tmp_path / "home"), resolve_model)
    theirs = SessionManager(open_store(tmp_path / "home"), resolve_model)
    await ours.store.checkpointer()  # the database exists
    try:
        async with stored() as plain:
            record = ours.new_record(str(workspace), "yolo", model)
            session = ours.open(record, Workspace(str(workspace)), Face())
            for i in range(3):
                await session.prompt(f"ours {i}")
            await assert_same_as_stored(session, plain)  # kept here at our last checkpoint
            await ours.close(record.id)

            other = theirs.open(theirs.record(record.id), Workspace(str(workspace)), Face())
            for i in range(2):
                await other.prompt(f"theirs {i}")
            await theirs.close(record.id)

            again = ours.open(ours.record(record.id), Workspace(str(workspace)), Face())
            await assert_same_as_stored(again, plain)
            assert await again.prompt("ours again") == "end_turn"
            await assert_same_as_stored(again, plain)
    finally:
        await ours.shutdown()
        await theirs.shutdown()


async def test_only_the_latest_history_of_a_few_threads_is_kept() -> None:
    saver = with_history_cache(InMemorySaver)()
    graph = StateGraph(DeepAgentState)
    graph.add_node("say", lambda state: {"messages": [("ai", f"after {len(state['messages'])}")]})
    graph.add_edge(START, "say")
    compiled = graph.compile(checkpointer=saver)
    threads = [f"t{i}" for i in range(checkpoints.MAX_THREADS + 4)]
    for _ in range(3):
        for thread in threads:
            config = {"configurable": {"thread_id": thread}}
            await compiled.ainvoke({"messages": [("user", "hi")]}, config)
    kept = saver._kept
    assert len(kept) == checkpoints.MAX_THREADS
    assert list(kept) == threads[-checkpoints.MAX_THREADS :]
    for thread in threads:
        config = {"configurable": {"thread_id": thread}}
        assert [m.content for m in (await compiled.aget_state(config)).values["messages"]] == [
            "hi",
            "after 1",
            "hi",
            "after 3",
            "hi",
            "after 5",
        ]
