"""The editor quits: `deepacp --stdio` ends with everything it started, whatever the order.

An editor that quits closes the agent's stdin and sends SIGTERM, often at once; after
`nvim -c qa!` the agent was found alive minutes later (issue 34). Each run starts the real
binary, brings it to a state (idle after a turn; a command running; a `session/load` under
way while the harness loads; an MCP server connected and a command running; an MCP server
that ignores SIGTERM and its closed input, with a child), then ends its input and sends
SIGTERM: input first, signal first (a random moment apart), or at once.
Every run must see the process gone within `EXIT_WITHIN` seconds of the first of the two,
and every process it started (each in a session of its own) gone too; then one fresh
process loads every session and finds each one's turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.reliability import MCP_SERVER, size
from tests.support.stdio import bare_stdio
from tests.support.waits import MARK_VARIABLE, marked, marked_pids, pid_alive, wait_for

pytestmark = pytest.mark.e2e

SEED = 34
EXIT_WITHIN = 2.0
HANG_AFTER = 15.0
"""A run whose process is still there this long after the stop is a hang (then killed)."""
SPREAD = 0.3
"""At most this many seconds between the two events, when one comes first."""
ORDERS = ("input, then SIGTERM", "SIGTERM, then input", "at once")
STATES = ("idle", "command running", "loading", "MCP server and command", "stubborn MCP server")
ROGUE_MCP = str(Path(__file__).with_name("rogue_mcp.py"))


class Editor:
    """The real binary on a bare wire, as an editor drives it; it reads everything the
    server writes (so the server never blocks on its output)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.messages: list[dict] = []
        self._replies: dict[int, asyncio.Future] = {}
        self._next_id = 0
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, home: Path, workspace: Path, turns: list[dict]) -> Editor:
        script = home.parent / f"script-{uuid.uuid4().hex}.json"
        script.write_text(json.dumps({"turns": turns}))
        process = await bare_stdio(home, script, cwd=workspace, limit=2**26)
        return cls(process)

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            message = json.loads(line)
            self.messages.append(message)
            reply = self._replies.pop(message.get("id"), None)
            if "method" not in message and reply is not None and not reply.done():
                reply.set_result(message)

    async def send(self, method: str, params: dict) -> asyncio.Future:
        """Send a request; its reply, as a future."""
        assert self.process.stdin is not None
        self._next_id += 1
        reply = self._replies[self._next_id] = asyncio.get_running_loop().create_future()
        message = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()
        return reply

    async def request(self, method: str, params: dict) -> dict:
        reply = await asyncio.wait_for(await self.send(method, params), 60)
        assert "result" in reply, reply
        return reply["result"]

    async def initialize(self) -> None:
        await self.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})

    async def new_session(self, workspace: Path, mcp_servers: list[dict] | None = None) -> str:
        params = {"cwd": str(workspace), "mcpServers": mcp_servers or []}
        return (await self.request("session/new", params))["sessionId"]

    async def prompt(self, session_id: str, text: str) -> asyncio.Future:
        params = {"sessionId": session_id, "prompt": [{"type": "text", "text": text}]}
        return await self.send("session/prompt", params)

    def updates(self, session_id: str) -> list[dict]:
        return [
            m["params"]["update"]
            for m in self.messages
            if m.get("method") == "session/update" and m["params"]["sessionId"] == session_id
        ]

    def close_input(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()

    def terminate(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGTERM)

    async def stop(self) -> None:
        """End it as an editor that closes cleanly does: its input, then wait."""
        self.close_input()
        await asyncio.wait_for(self.process.wait(), HANG_AFTER)
        await self._reader


def processes() -> Iterator[tuple[int, int, int]]:
    """(pid, parent pid, session id) of each live process."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z":
            yield int(entry.name), int(fields[1]), int(fields[3])


def sessions_started_by(pid: int) -> set[int]:
    """The session ids of `pid`'s children: deepacp starts each command and MCP server
    in a session of its own, with whatever it starts (the lifeline's watchdog too)."""
    return {session for _, parent, session in processes() if parent == pid}


def alive_in(sessions: set[int]) -> list[int]:
    return [pid for pid, _, session in processes() if session in sessions]


@dataclass
class Runs:
    """What the runs of one state left, and how long each process took to end."""

    tmp: Path
    rng: random.Random = field(default_factory=lambda: random.Random(SEED))
    turns: list[tuple[str, str]] = field(default_factory=list)
    """(session id, prompt) of each turn that must load afterwards."""
    exits: list[float] = field(default_factory=list)

    @property
    def home(self) -> Path:
        return self.tmp / "home"

    @property
    def workspace(self) -> Path:
        path = self.tmp / "workspace"
        path.mkdir(exist_ok=True)
        return path


async def bring_to(state: str, runs: Runs, n: int) -> Editor:
    """A fresh server in `state`, its turn (if it has one) noted in `runs`."""
    mark = f"{uuid.uuid4().hex}-{n}"
    command = {"id": f"c{n}", "name": "execute", "args": {"command": marked("sleep 30", mark)}}
    if state == "loading":
        session_id, _ = runs.turns[0]
        for saved in (runs.home / "cache" / "replays").glob("*.json"):
            saved.unlink()  # the load reads the checkpoints, with the harness it waits for
        editor = await Editor.start(runs.home, runs.workspace, [])
        await editor.send("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        params = {"cwd": str(runs.workspace), "sessionId": session_id, "mcpServers": []}
        await editor.send("session/load", params)
        await asyncio.sleep(runs.rng.uniform(0, 0.5))
        return editor
    turns: list[dict] = [{"content": f"answer {n}"}]
    servers: list[dict] = []
    if state == "command running":
        turns = [{"tool_calls": [command]}]
    elif state == "MCP server and command":
        turns = [{"tool_calls": [{"id": f"m{n}", "name": "notes_whoami", "args": {}}]}]
        turns.append({"tool_calls": [command]})
        servers = [{"name": "notes", "command": sys.executable, "args": [MCP_SERVER], "env": []}]
    elif state == "stubborn MCP server":  # connected before the turn's model call
        server = {"name": "stubborn", "command": sys.executable, "args": [ROGUE_MCP, "stubborn"]}
        servers = [{**server, "env": [{"name": MARK_VARIABLE, "value": mark}]}]
    editor = await Editor.start(runs.home, runs.workspace, turns)
    await editor.initialize()
    session_id = await editor.new_session(runs.workspace, servers)
    await editor.request("session/set_mode", {"sessionId": session_id, "modeId": "yolo"})
    prompt = f"turn {n} ({state})"
    reply = await editor.prompt(session_id, prompt)
    runs.turns.append((session_id, prompt))
    if state in ("idle", "stubborn MCP server"):
        await asyncio.wait_for(reply, 60)
        await asyncio.sleep(runs.rng.uniform(0, 0.2))
    else:
        await wait_for(lambda: marked_pids(mark), 60)
    return editor


async def end(editor: Editor, order: str, runs: Runs) -> float:
    """Close the input and send SIGTERM in `order`; the seconds from the first of them to
    the process's exit (`HANG_AFTER` and the process killed: it hung)."""
    first, second = editor.close_input, editor.terminate
    if order == "SIGTERM, then input":
        first, second = second, first
    started = time.monotonic()
    first()
    if order != "at once":
        await asyncio.sleep(runs.rng.uniform(0, SPREAD))
    second()
    try:
        await asyncio.wait_for(editor.process.wait(), HANG_AFTER)
    except TimeoutError:
        editor.process.kill()
        await editor.process.wait()
        return HANG_AFTER
    return time.monotonic() - started


async def check_turns_load(runs: Runs) -> list[str]:
    """Load every session in one fresh process: each shows its prompt, and no tool call
    is left running in it."""
    problems = []
    editor = await Editor.start(runs.home, runs.workspace, [])
    try:
        await editor.initialize()
        for session_id, prompt in dict(runs.turns).items():
            params = {"cwd": str(runs.workspace), "sessionId": session_id, "mcpServers": []}
            try:
                await editor.request("session/load", params)
            except AssertionError as exc:
                problems.append(f"{prompt}: the load failed: {exc}")
                continue
            updates = editor.updates(session_id)
            said = [
                u["content"]["text"] for u in updates if u["sessionUpdate"] == "user_message_chunk"
            ]
            if prompt not in said:
                problems.append(f"{prompt}: not in the loaded session ({said})")
            statuses: dict[str, str] = {}
            for update in updates:
                if update["sessionUpdate"] in ("tool_call", "tool_call_update"):
                    statuses[update["toolCallId"]] = update.get("status") or statuses.get(
                        update["toolCallId"], "pending"
                    )
            if open_calls := [i for i, s in statuses.items() if s not in ("completed", "failed")]:
                problems.append(f"{prompt}: tool calls left open: {open_calls}")
    finally:
        await editor.stop()
    return problems


@pytest.mark.slow(
    reason="three deepacp servers in turn, one for each order of input end and SIGTERM"
)
@pytest.mark.parametrize("state", STATES)
async def test_the_server_ends_with_what_it_started_whatever_the_order(
    tally, tmp_path: Path, state: str
) -> None:
    t = tally("shutdown: input end and SIGTERM together")
    runs = Runs(tmp_path)
    if state == "loading":  # the session every run loads, made by a server that ended
        first = await bring_to("idle", runs, 0)
        await first.stop()
    rounds = size(1, 20)
    for n, order in enumerate([o for o in ORDERS for _ in range(rounds)], start=1):
        editor = await bring_to(state, runs, n)
        started_sessions = sessions_started_by(editor.process.pid)
        if state not in ("idle", "loading"):
            t.record(bool(started_sessions), f"run {n}: no command or server was running")
        took = await end(editor, order, runs)
        runs.exits.append(took)
        t.record(took <= EXIT_WITHIN, f"run {n} ({order}): the server took {took:.2f} s to end")
        with contextlib.suppress(AssertionError):
            gone = lambda s=started_sessions: not alive_in(s)  # noqa: E731
            await wait_for(gone, max(0.1, EXIT_WITHIN - took))
        left = alive_in(started_sessions)
        t.record(not left, f"run {n} ({order}): processes it started outlived it: {left}")
        for pid in left:
            if pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
    problems = await check_turns_load(runs)
    t.record(not problems, f"after the runs: {problems}")
    t.figures["shutdown_runs"] = len(runs.exits)
    t.figures["shutdown_max_s"] = round(max(runs.exits), 2)
    t.figures["shutdown_p50_s"] = round(sorted(runs.exits)[len(runs.exits) // 2], 2)
    t.figures["shutdown_hangs"] = sum(1 for e in runs.exits if e >= HANG_AFTER)
    print(
        f"{state}: {len(runs.exits)} runs, exit p50 {t.figures['shutdown_p50_s']} s, "
        f"max {t.figures['shutdown_max_s']} s, {t.figures['shutdown_hangs']} hung"
    )
    t.check()
