"""Crash safety: SIGKILL the server at random moments of a turn, then check what survived.

Every kill is followed by a fresh server on the same $DEEPACP_HOME and workspace. It must
replay, on `session/load`, every message of the last checkpoint written before the kill
(read independently with LangGraph's saver); both SQLite files must pass an integrity
check; every file the turn touched must hold exactly its old or its new content and keep its
permissions; once the session is loaded again no temporary file may be left (atomic_write
names them `.NAME.*.tmp` and journals them, so a restart sweeps what a kill left); and the
next prompt must succeed with a valid history.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import signal
import sqlite3
from pathlib import Path

import pytest
from acp import schema as S
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph

from deepacp.harness.state import DeepAgentState
from tests.support.acp import write_script
from tests.support.reliability import size
from tests.support.waits import history_problems

pytestmark = pytest.mark.e2e

SEED = 1405
BIG_FILE = "src/big.py"  # edited in place, mode 0o750
DATA_FILE = "data.txt"  # rewritten whole, mode 0o640
MODES = {BIG_FILE: 0o750, DATA_FILE: 0o640}
TEXT = "Working through the next step of the change, one small piece at a time. "
RECOVERED = "Back after the crash."


def code_like(rng: random.Random, kilobytes: int, tag: str) -> str:
    """About `kilobytes` KB of lines that differ from any other call's (a torn write shows)."""
    lines, total = [], 0
    while total < kilobytes * 1024:
        line = f"value_{tag}_{len(lines)} = {rng.getrandbits(64)}  # {tag}\n"
        lines.append(line)
        total += len(line)
    return "".join(lines)


def seed_workspace(workspace: Path, rng: random.Random) -> None:
    (workspace / "src").mkdir(parents=True, exist_ok=True)
    (workspace / BIG_FILE).write_text("# revision seed\n" + code_like(rng, 300, "big"))
    (workspace / DATA_FILE).write_text(code_like(rng, 150, "data0"))
    for name, mode in MODES.items():
        (workspace / name).chmod(mode)


def crash_turn(
    rng: random.Random, workspace: Path, round_: int
) -> tuple[list[dict], dict[str, tuple[str | None, str]]]:
    """A multi-step script (its model calls) and, per file it touches, (old, new) content."""
    big = (workspace / BIG_FILE).read_text()
    revision = big.split("\n", 1)[0]
    new_file = f"notes/round_{round_}.txt"
    outcomes = {
        DATA_FILE: ((workspace / DATA_FILE).read_text(), code_like(rng, 150, f"data{round_}")),
        BIG_FILE: (big, big.replace(revision, f"# revision {round_ + 1}", 1)),
        new_file: (None, code_like(rng, 40, f"new{round_}")),
    }
    edit = {"file_path": BIG_FILE, "old_string": revision, "new_string": f"# revision {round_ + 1}"}
    calls = [
        ("write_file", {"file_path": DATA_FILE, "content": outcomes[DATA_FILE][1]}),
        ("edit_file", edit),
        ("write_file", {"file_path": new_file, "content": outcomes[new_file][1]}),
        ("execute", {"command": "sleep 0.1; echo built"}),
    ]
    rng.shuffle(calls)
    turns = [
        {
            "content": TEXT,
            "delay_ms": rng.choice([0, 2, 5]),
            "tool_calls": [{"id": f"r{round_}_{i}", "name": name, "args": args}],
        }
        for i, (name, args) in enumerate(calls)
    ]
    turns.append({"content": "All four steps are done.", "delay_ms": 2})
    return turns, outcomes


def checkpointed_messages(home: Path, thread_id: str) -> list:
    """The thread's messages as of its latest checkpoint, read straight from the SQLite file.

    The messages channel is stored as deltas, so a bare graph with deepacp's state schema
    rebuilds it the way LangGraph does on load.
    """
    builder = StateGraph(DeepAgentState)
    builder.add_node("read", lambda state: {})
    builder.add_edge(START, "read")
    with contextlib.closing(sqlite3.connect(home / "checkpoints.db")) as conn:
        graph = builder.compile(checkpointer=SqliteSaver(conn))
        state = graph.get_state({"configurable": {"thread_id": thread_id}})
    return state.values.get("messages", [])


def expected_rows(messages: list) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for message in messages:
        if isinstance(message, HumanMessage):
            rows.append(("user", message.text))
        elif isinstance(message, AIMessage):
            if message.text:
                rows.append(("agent", message.text))
            rows.extend(("call", call["id"]) for call in message.tool_calls)
        elif isinstance(message, ToolMessage):
            rows.append(("result", message.tool_call_id))
    return rows


def replayed_rows(updates: list) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for _, update in updates:
        if isinstance(update, S.UserMessageChunk):
            rows.append(("user", update.content.text))
        elif isinstance(update, S.AgentMessageChunk):
            rows.append(("agent", update.content.text))
        elif isinstance(update, S.ToolCallStart):
            rows.append(("call", update.tool_call_id))
        elif isinstance(update, S.ToolCallProgress) and update.status in ("completed", "failed"):
            rows.append(("result", update.tool_call_id))
    return rows


def integrity(home: Path) -> list[str]:
    problems = []
    for name in ("sessions.db", "checkpoints.db"):
        with contextlib.closing(sqlite3.connect(home / name)) as conn:
            result = conn.execute("PRAGMA integrity_check").fetchall()
        if result != [("ok",)]:
            problems.append(f"{name}: {result[:3]}")
    return problems


def torn_files(workspace: Path, outcomes: dict[str, tuple[str | None, str]]) -> list[str]:
    problems = []
    for name, (old, new) in outcomes.items():
        path = workspace / name
        content = path.read_text() if path.exists() else None
        if content not in (old, new):
            problems.append(f"{name} is neither old nor new ({len(content or '')} chars)")
        if name in MODES and oct(path.stat().st_mode & 0o777) != oct(MODES[name]):
            problems.append(f"{name} has mode {oct(path.stat().st_mode & 0o777)}")
    return problems


def temp_files(workspace: Path) -> list[str]:
    return [f"temp file left: {p.relative_to(workspace)}" for p in workspace.rglob(".*.tmp")]


async def kill_during_turn(agent, session: str, rng: random.Random, turns: list[dict]) -> None:
    """Prompt, wait for a random number of updates plus a random pause, then SIGKILL."""
    expected_updates = sum(len(t["content"]) // 8 + 4 for t in turns)
    wait_for = rng.randint(0, expected_updates)
    first = len(agent.client.updates)
    task = asyncio.create_task(agent.prompt(session, "make the four changes"))
    while len(agent.client.updates) - first < wait_for and not task.done():
        await asyncio.sleep(0.001)
    await asyncio.sleep(rng.uniform(0, 0.03))
    agent.process.send_signal(signal.SIGKILL)
    await agent.process.wait()
    task.cancel()
    with contextlib.suppress(BaseException):
        await task
    agent.wire.incoming.clear()  # the killed connection may have half-written frames


def last_request(record: Path) -> dict:
    """The newest request the scripted model recorded (a kill may have torn an older one)."""
    return json.loads(record.read_text().splitlines()[-1])


async def recovery_problems(agent, session: str, expected: list) -> list[str]:
    """Load the killed session on a fresh server; what is wrong with what it replays and does."""
    await agent.conn.load_session(cwd=str(agent.workspace), session_id=session, mcp_servers=[])
    replayed = replayed_rows(agent.client.updates)
    problems = temp_files(agent.workspace)  # a kill between write and rename: swept on load
    if replayed[: len(expected)] != expected:
        problems.append(f"replay lost checkpointed messages ({len(replayed)}/{len(expected)})")
    stop = (await agent.prompt(session, "are you there?")).stop_reason
    if stop != "end_turn" or not agent.client.text().endswith(RECOVERED):
        problems.append(f"the next prompt answered {stop}")
    return problems + history_problems(last_request(agent.script.parent / "requests.jsonl"))


@pytest.mark.slow(
    reason="five deepacp servers in turn, each killed mid-turn and its session loaded by the next"
)
async def test_kill_9_at_random_points_of_a_turn(agent_factory, tally, tmp_path) -> None:
    rng = random.Random(SEED)
    t = tally("crash safety")
    workspace, home = tmp_path / "workspace", tmp_path / "home"
    workspace.mkdir()
    seed_workspace(workspace, rng)
    requests = str(tmp_path / "requests.jsonl")
    session: str | None = None
    expected: list = []
    damage: list[str] = []
    turns_in_session = 0
    rounds = size(4, 50)
    for round_ in range(rounds + 1):
        turns, outcomes = crash_turn(rng, workspace, round_)
        script = turns if session is None else [{"content": RECOVERED}, *turns]
        async with agent_factory(script) as agent:
            if session is not None:
                problems = damage + await recovery_problems(agent, session, expected)
                t.record(not problems, f"kill {round_}: {problems}")
            if round_ == rounds:
                break
            if session is None or turns_in_session >= 2 or rng.random() < 0.3:
                write_script(agent.script, turns, record=requests)  # a new session's model
                session = await agent.new_session()
                await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
                turns_in_session = 0
            turns_in_session += 1
            await kill_during_turn(agent, session, rng, turns)
        # Before any server touches them again: what the kill left behind.
        expected = expected_rows(checkpointed_messages(home, session))
        damage = integrity(home) + torn_files(workspace, outcomes)
    t.check()
