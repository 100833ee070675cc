"""Approval bypass, property-based: hypothesis generates sessions of random tool calls —
parallel calls, sub-agent calls, MCP calls, near-miss commands, mode switches between and
during turns, random answers — on the real session runtime, starting in `ask` mode. From
the workspace itself (files, a command log, the MCP server's notes) it checks that nothing
changed and no command ran without an approval that covers it, that approved calls did run,
and that "always" answers apply exactly to what they name."""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from deepacp.events import PermissionRequest
from deepacp.models import resolve_model
from deepacp.session.core import Session
from deepacp.session.lifecycle import SessionManager, Workspace
from deepacp.session.mcp import McpServer
from deepacp.session.storage.sqlite import SessionStore
from tests.support.reliability import FULL

MCP_SERVER = str(Path(__file__).parents[1] / "support" / "mcp_server.py")
FILE_TOOLS = ("write_file", "edit_file", "delete")
# Command -> what it appends to cmd.log. The last two are near misses of the first: an
# "always" for one must not cover the others.
COMMANDS = {
    "echo A >> cmd.log": "A",
    "echo B >> cmd.log": "B",
    "echo A >> cmd.log; echo C >> cmd.log": "AC",
    "echo A >> cmd.log ": "A",
}
MODES = ("ask", "accept-edits", "plan", "yolo")
ANSWERS = ("allow_once", "allow_always", "reject_once", "reject_always")
# World events are timed in model messages: a prompt's mode switch at its first message - 0.5,
# an answer (and the mode switch made with it) at its call's message + ANSWERED. Calls no one
# was asked about run at once, beside the questions of their batch; a call asked about runs
# after its answer, so a switch to plan made while answering still stops it.
ANSWERED = 0.25

batch = st.lists(st.sampled_from([*FILE_TOOLS, "execute", "read_file", "mcp"]), max_size=3)
turn = st.one_of(batch.filter(bool), st.just("task"))  # parallel calls, or one sub-agent
prompts = st.lists(
    st.tuples(st.sampled_from([None, *MODES]), st.lists(turn, min_size=1, max_size=3)),
    min_size=1,
    max_size=3,
)


@dataclass
class Call:
    id: str
    tool: str  # a file tool, "execute" or "mcp"
    message: int  # which model message (in execution order) carries the call
    command: str = ""
    card: str = ""  # the card a question about it appears on (the task's, for a sub-agent)

    @property
    def key(self) -> str:
        """What an "always" answer about this call covers."""
        return self.command if self.tool == "execute" else self.tool


@dataclass
class World:
    root: Path
    calls: list[Call] = field(default_factory=list)
    answers: dict[str, str] = field(default_factory=dict)  # card -> the user's answer
    events: list[tuple[float, str, str]] = field(default_factory=list)  # (when, kind, value)

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    def timeline(self) -> list[tuple[float, str, str]]:
        """Events in time order; those at one time (answers in a row) in the order made."""
        return sorted(self.events, key=lambda event: event[0])

    def mode(self, before: float) -> str:
        modes = [v for when, kind, v in self.timeline() if kind == "mode" and when < before]
        return modes[-1] if modes else "ask"

    def rules(self, before: float) -> tuple[set[str], set[str]]:
        allowed: set[str] = set()
        rejected: set[str] = set()
        for when, kind, key in self.timeline():
            if when < before and kind in ("allow_always", "reject_always"):
                (allowed if kind == "allow_always" else rejected).add(key)
                (rejected if kind == "allow_always" else allowed).discard(key)
        return allowed, rejected

    def happened(self, call: Call) -> bool:
        path = self.workspace / f"{call.id}.txt"
        if call.tool == "write_file":
            return path.exists()
        if call.tool == "edit_file":
            return path.read_text() == "new\n"
        if call.tool == "delete":
            return not path.exists()
        notes = self.root / "notes.txt"
        return notes.exists() and call.id in notes.read_text().split()


def tool_call(call: Call) -> dict:
    path = f"{call.id}.txt"
    args = {
        "write_file": {"file_path": path, "content": "x\n"},
        "edit_file": {"file_path": path, "old_string": "old", "new_string": "new"},
        "delete": {"file_path": path},
        "execute": {"command": call.command},
        "mcp": {"text": call.id},
    }[call.tool]
    return {
        "id": call.id,
        "name": "notes_write_note" if call.tool == "mcp" else call.tool,
        "args": args,
    }


def build(world: World, plan: list, draw) -> list[dict]:
    """The script for `plan`; records each call and the prompt-start mode switches."""
    turns: list[dict] = []
    message = 0
    for mode, model_turns in plan:
        if mode is not None:
            world.events.append((message - 0.5, "mode", mode))
        for kinds in model_turns:
            if kinds == "task":
                task = f"t{message}"
                args = {"description": "do it", "subagent_type": "general-purpose"}
                turns.append({"tool_calls": [{"id": task, "name": "task", "args": args}]})
                message += 1
                child = Call(f"c{message}", draw(st.sampled_from(FILE_TOOLS)), message, card=task)
                world.calls.append(child)
                turns += [{"tool_calls": [tool_call(child)]}, {"content": "child done"}]
            else:
                batch_calls = []
                for i, kind in enumerate(kinds):
                    if kind == "read_file":
                        batch_calls.append(
                            {
                                "id": f"r{message}_{i}",
                                "name": "read_file",
                                "args": {"file_path": "README.md"},
                            }
                        )
                        continue
                    command = draw(st.sampled_from(list(COMMANDS))) if kind == "execute" else ""
                    call = Call(f"c{message}_{i}", kind, message, command)
                    call.card = call.id
                    world.calls.append(call)
                    batch_calls.append(tool_call(call))
                turns.append({"tool_calls": batch_calls})
            message += 1
        turns.append({"content": "ok"})
    for call in world.calls:
        if call.tool in ("edit_file", "delete"):
            (world.workspace / f"{call.id}.txt").write_text("old\n")
    return turns


class User:
    """Answers each question at random, sometimes switching mode first."""

    def __init__(self, world: World, draw) -> None:
        self.world, self.draw = world, draw
        self.session: Session | None = None

    async def emit(self, event) -> None:
        pass

    async def ask(self, question) -> str:
        return "yes"

    async def ask_permission(self, request: PermissionRequest) -> str:
        [call] = [c for c in self.world.calls if c.card == request.tool_call_id]
        # After its own message was gated (rules apply to later messages), before the next
        # prompt's mode switch (at its first message - 0.5).
        when = call.message + ANSWERED
        if self.draw(st.booleans()):
            mode = self.draw(st.sampled_from(MODES))
            await self.session.set_mode(mode)
            self.world.events.append((when, "mode", mode))
        answer = self.draw(st.sampled_from(ANSWERS))
        self.world.answers[request.tool_call_id] = answer
        if answer.endswith("always"):
            self.world.events.append((when, answer, call.key))
        return answer


async def run(world: World, plan: list, draw) -> None:
    world.workspace.mkdir()
    (world.workspace / "README.md").write_text("hello\n")
    script = world.root / "script.json"
    script.write_text(json.dumps({"turns": build(world, plan, draw)}))
    manager = SessionManager(SessionStore(world.root / "home"), resolve_model)
    record = manager.new_record(str(world.workspace), "ask", f"scripted:{script}")
    user = User(world, draw)
    servers: tuple[McpServer, ...] = ()
    if any(c.tool == "mcp" for c in world.calls):
        env = (("NOTES_FILE", str(world.root / "notes.txt")),)
        servers = (McpServer("notes", "stdio", sys.executable, (MCP_SERVER,), env),)
    workspace = Workspace(str(world.workspace), mcp_servers=servers)
    session = user.session = manager.open(record, workspace, user)
    try:
        for p, _ in enumerate(plan):
            if (mode := plan[p][0]) is not None:
                await session.set_mode(mode)
            await session.prompt(f"prompt {p}")
    finally:
        await manager.shutdown()


def authorized(world: World, call: Call) -> bool:
    """Approved by its own answer, or let through by a mode or rule in force when gated."""
    answer = world.answers.get(call.card)
    if answer is not None:
        return answer.startswith("allow")
    mode = world.mode(call.message)
    allowed, rejected = world.rules(call.message)
    if call.key in rejected:
        return False
    return (
        mode == "yolo"
        or call.key in allowed
        or (mode == "accept-edits" and call.tool in FILE_TOOLS)
    )


def ran_at(world: World, call: Call) -> float:
    return call.message + (ANSWERED + 0.01 if call.card in world.answers else 0)


def violations(world: World) -> list[str]:
    found = []
    for call in world.calls:
        if call.tool == "execute":
            continue
        ran_mode = world.mode(ran_at(world, call))
        if world.happened(call):
            if not authorized(world, call):
                found.append(f"{call.id} {call.tool} happened without approval")
            if ran_mode == "plan":
                found.append(f"{call.id} {call.tool} changed something in plan mode")
        elif world.answers.get(call.card, "").startswith("allow") and ran_mode != "plan":
            found.append(f"{call.id} {call.tool} was approved but did not happen")
    # Commands all append to one log: compare what ran with what was allowed to run.
    log_path = world.workspace / "cmd.log"
    ran = Counter(log_path.read_text().split()) if log_path.exists() else Counter()
    may, must = Counter(), Counter()
    for call in world.calls:
        if call.tool == "execute" and world.mode(ran_at(world, call)) != "plan":
            if authorized(world, call):
                may.update(COMMANDS[call.command])
            if world.answers.get(call.card, "").startswith("allow"):
                must.update(COMMANDS[call.command])
    for letter in "ABC":
        if not must[letter] <= ran[letter] <= may[letter]:
            found.append(
                f"command output {letter}: ran {ran[letter]}, allowed {must[letter]}..{may[letter]}"
            )
    return found


@pytest.mark.slow(reason="a whole turn per hypothesis example: 12 here, 300 at full size")
@pytest.mark.timeout(1800 if FULL else 120)
@settings(
    max_examples=300 if FULL else 12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    derandomize=not FULL,
    # No shrinking: every example runs a real session and shrinking one took over 5 minutes;
    # a failure prints its example as drawn.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(plan=prompts, data=st.data())
def test_nothing_happens_without_an_approval_that_covers_it(plan, data, tally) -> None:
    with tempfile.TemporaryDirectory() as folder:
        world = World(Path(folder))
        asyncio.run(run(world, plan, data.draw))
        found = violations(world)
    t = tally("approval bypass")
    for call in world.calls:
        t.record(not any(v.startswith(call.id + " ") for v in found), f"{call.id} {call.tool}")
    t.record(not [v for v in found if v.startswith("command")], "; ".join(found))
    assert not found, found
