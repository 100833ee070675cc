"""The session manager: one owner of creating, claiming, listing, closing and deleting
sessions; ephemeral sessions that leave nothing behind; cancel as a named outcome."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from deepacp.errors import SessionInUse, SessionNotFound, WrongWorkspace
from deepacp.events import CommandsChanged, Event, MessageChunk, ToolFinished
from deepacp.models import resolve_model
from deepacp.session.lifecycle import SessionManager, Workspace
from deepacp.session.parts.background import BackgroundPart
from deepacp.session.parts.goal import GoalPart
from deepacp.session.storage.sqlite import SessionStore

MCP_SERVER = str(Path(__file__).parents[2] / "support" / "mcp_server.py")


class Recorder:
    """A face that records what it is told and answers questions from a list."""

    def __init__(self, answers: list[str | None] | None = None) -> None:
        self.events: list[Event] = []
        self.answers = answers or []

    async def emit(self, event: Event) -> None:
        self.events.append(event)

    async def ask_permission(self, request):
        return "allow_once"

    async def ask(self, question):
        return self.answers.pop(0) if self.answers else None

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]


def script(tmp_path: Path, turns: list[dict]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"turns": turns}))
    return f"scripted:{path}"


@pytest.fixture
async def manager(tmp_path: Path) -> AsyncIterator[SessionManager]:
    """A session manager on a home of its own (tmp_path / "home"), shut down after the test."""
    made = SessionManager(SessionStore(tmp_path / "home"), resolve_model)
    try:
        yield made
    finally:
        await made.shutdown()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


async def test_sessions_are_claimed_listed_closed_and_deleted(tmp_path, workspace) -> None:
    home = tmp_path / "home"
    model = script(tmp_path, [{"content": "hello"}])
    ours, theirs = (SessionManager(SessionStore(home), resolve_model) for _ in range(2))
    try:
        record = ours.new_record(str(workspace), "ask", model)
        session = ours.open(record, Workspace(str(workspace)), Recorder())
        assert ours.open(record, Workspace(str(workspace)), Recorder()) is session
        assert [r.id for r in theirs.records(str(workspace))] == [record.id]
        with pytest.raises(SessionInUse):  # another process (another store) cannot drive it
            theirs.open(record, Workspace(str(workspace)), Recorder())
        with pytest.raises(WrongWorkspace):
            ours.record(record.id, str(tmp_path))
        assert await session.prompt("hi") == "end_turn"

        assert await ours.close(record.id) and not await ours.close(record.id)
        reopened = theirs.open(theirs.record(record.id), Workspace(str(workspace)), Recorder())
        assert [type(e).__name__ for e in await reopened.history()][:2] == [
            "UserMessage",
            "MessageChunk",
        ]
        await theirs.delete(record.id)
        await theirs.delete(record.id)  # already gone: no error
        assert theirs.records() == []
        with pytest.raises(SessionNotFound):
            theirs.record(record.id)
    finally:
        await ours.shutdown()
        await theirs.shutdown()


async def test_an_ephemeral_session_is_never_stored_or_listed(tmp_path, workspace, manager) -> None:
    home = tmp_path / "home"
    write = {"id": "w", "name": "write_file", "args": {"file_path": "a.txt", "content": "x\n"}}
    big = {"id": "big", "name": "execute", "args": {"command": "seq 1 30000"}}
    model = script(tmp_path, [{"tool_calls": [write, big]}, {"content": "done"}])
    face = Recorder()
    async with manager.ephemeral(Workspace(str(workspace)), "yolo", model, face) as session:
        assert await session.prompt("write it") == "end_turn"
        scratch = home / "scratch" / session.record.thread_id
        assert any(scratch.rglob("*")), "the large result was offloaded to the scratch folder"
    assert (workspace / "a.txt").read_text() == "x\n"
    assert {e.status for e in face.of(ToolFinished)} == {"completed"}
    assert manager.records() == []
    assert not scratch.exists()
    if (home / "sessions.db").exists():
        with sqlite3.connect(home / "sessions.db") as db:
            assert db.execute("SELECT COUNT(*) FROM sessions").fetchone() == (0,)


async def test_commands_are_announced_once_and_again_when_skills_change(
    tmp_path, workspace, manager
) -> None:
    face = Recorder()
    record = manager.new_record(str(workspace), "ask", script(tmp_path, []))
    session = manager.open(record, Workspace(str(workspace)), face)
    await session.announce()
    await session.refresh_commands()  # nothing changed: nothing sent
    [first] = face.of(CommandsChanged)
    assert "compact" in {c.name for c in first.commands}
    skill = workspace / ".deepacp" / "skills" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write the release notes.\n---\nSteps.\n"
    )
    await session.refresh_commands()
    assert "release-notes" in {c.name for c in face.of(CommandsChanged)[-1].commands}
    assert len(face.of(CommandsChanged)) == 2


async def test_cancel_and_a_dismissed_question_end_the_turn_as_cancelled(
    tmp_path, workspace, manager
) -> None:
    ask = {"id": "q", "name": "ask_user", "args": {"question": "Which one?"}}
    turns = [{"content": "word " * 300, "delay_ms": 20}, {"tool_calls": [ask]}, {"content": "ok"}]
    face = Recorder(answers=[None])  # the user dismisses the question
    record = manager.new_record(str(workspace), "ask", script(tmp_path, turns))
    session = manager.open(record, Workspace(str(workspace)), face)
    turn = asyncio.create_task(session.prompt("stream"))
    while not face.of(MessageChunk):
        await asyncio.sleep(0.01)
    await session.cancel()
    assert await turn == "cancelled"
    assert await session.prompt("ask me") == "cancelled"
    assert [e.text for e in face.of(ToolFinished) if e.tool_call_id == "q"] == [
        "Cancelled by the user before it finished."
    ]
    assert await session.prompt("again") == "end_turn"  # the thread is still valid


async def test_stopping_the_caller_is_not_mistaken_for_a_cancelled_turn(
    tmp_path, workspace, manager
) -> None:
    face = Recorder()
    turns = [{"content": "word " * 300, "delay_ms": 20}]
    record = manager.new_record(str(workspace), "ask", script(tmp_path, turns))
    session = manager.open(record, Workspace(str(workspace)), face)
    caller = asyncio.create_task(session.prompt("stream"))
    while not face.of(MessageChunk):
        await asyncio.sleep(0.01)
    caller.cancel()  # the server shutting down, say
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert not session.running


def running(token: str) -> bool:
    """Whether a process whose command line holds `token` runs on this machine."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            if token.encode() in cmdline.read_bytes():
                return True
    return False


async def test_a_cancel_while_the_face_is_told_something_stops_the_running_command(
    tmp_path, workspace, manager
) -> None:
    """The cancel lands while an event is being shown (the graph's stream waits at its
    yield, not in the graph): the command still running is stopped, not left to finish
    unseen and write its result into the thread later."""
    token = f"{os.getpid()}.{id(tmp_path) % 997}"  # this test's own sleep
    calls = [
        {"id": "ls1", "name": "ls", "args": {"path": ""}},
        {"id": "run1", "name": "execute", "args": {"command": f"touch started; sleep 6{token}"}},
    ]

    class Holding(Recorder):
        """Keeps the turn in `emit` once the listing is shown and the command runs."""

        held = asyncio.Event()

        async def emit(self, event: Event) -> None:
            await super().emit(event)
            if isinstance(event, ToolFinished) and event.tool_call_id == "ls1":
                while not (workspace / "started").exists():
                    await asyncio.sleep(0.01)
                self.held.set()
                await asyncio.Event().wait()

    face = Holding()
    turns = [{"tool_calls": calls}, {"content": "after"}]
    record = manager.new_record(str(workspace), "yolo", script(tmp_path, turns))
    session = manager.open(record, Workspace(str(workspace)), face)
    turn = asyncio.create_task(session.prompt("go"))
    await face.held.wait()
    assert running(f"sleep 6{token}")
    await session.cancel()
    assert await turn == "cancelled"
    for _ in range(200):  # a killed group is reaped at once; 60 s if it was left
        if not running(f"sleep 6{token}"):
            break
        await asyncio.sleep(0.05)
    assert not running(f"sleep 6{token}"), "the cancelled command still runs"


async def test_the_parts_add_to_the_graph_only_once_the_harness_is_imported(
    tmp_path, workspace, monkeypatch
) -> None:
    """The harness is imported by a thread of its own while the server starts; a part that
    imported it on the event loop meanwhile (the background tasks' runner) made Python
    refuse both imports (a deadlock error), and the first prompt failed."""
    order: list[str] = []
    released = asyncio.Event()

    async def harness_ready() -> None:
        await released.wait()
        order.append("harness ready")

    contribute = BackgroundPart.contribute

    async def recorded(self, parts) -> None:
        order.append("background part")
        await contribute(self, parts)

    monkeypatch.setattr(BackgroundPart, "contribute", recorded)
    manager = SessionManager(
        SessionStore(tmp_path / "home"), resolve_model, harness_ready=harness_ready
    )
    try:
        record = manager.new_record(str(workspace), "ask", script(tmp_path, [{"content": "hi"}]))
        session = manager.open(record, Workspace(str(workspace)), Recorder())
        turn = asyncio.create_task(session.prompt("hello"))
        for _ in range(20):
            await asyncio.sleep(0)
        assert order == []  # nothing of the graph is made while the harness loads
        released.set()
        assert await turn == "end_turn"
        assert order[:2] == ["harness ready", "background part"]
    finally:
        await manager.shutdown()


async def test_a_goal_adds_the_grader_on_the_same_model_and_a_model_change_still_applies(
    tmp_path, workspace, manager
) -> None:
    first, second = script(tmp_path, []), str(tmp_path / "other.json")
    Path(second).write_text(json.dumps({"turns": []}))
    second = f"scripted:{second}"
    record = manager.new_record(str(workspace), "ask", first)
    session = manager.open(record, Workspace(str(workspace)), Recorder())
    grading = "GoalMiddleware.after_model"
    assert grading not in (await session.graph()).nodes  # no goal: no grader step
    model = session.host._model
    session.part(GoalPart).set("tests pass")
    assert grading in (await session.graph()).nodes
    assert session.host._model is model  # a scripted model keeps its place in the script
    session.part(GoalPart).set(None)
    await session.set_model(second)
    await session.graph()
    assert session.host._model is not model and session.record.goal is None


async def test_only_a_lasting_session_offers_background_tasks(tmp_path, workspace, manager) -> None:
    requests = tmp_path / "requests.jsonl"
    path = tmp_path / "script.json"
    path.write_text(
        json.dumps({"turns": [{"content": "a"}, {"content": "b"}], "record": str(requests)})
    )
    record = manager.new_record(str(workspace), "ask", f"scripted:{path}")
    lasting = manager.open(record, Workspace(str(workspace)), Recorder())
    assert await lasting.prompt("hi") == "end_turn"
    async with manager.ephemeral(
        Workspace(str(workspace)), "ask", f"scripted:{path}", Recorder()
    ) as once:
        assert await once.prompt("hi") == "end_turn"  # an LSP edit: it ends with the run
    offered = [json.loads(line)["tools"] for line in requests.read_text().splitlines()]
    assert "start_background_task" in offered[0]
    assert "start_background_task" not in offered[1]
