"""Waiting on conditions, and checks on what a model was sent, for tests over real processes."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path


async def wait_for(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.01)


def assert_history_valid(request: dict) -> None:
    """Every tool call the model is shown has its result right after it."""
    messages = request["messages"]
    for i, message in enumerate(messages):
        for call in message.get("tool_calls", []):
            answers = [m for m in messages[i + 1 :] if m.get("tool_call_id") == call["id"]]
            assert len(answers) == 1, f"tool call {call['id']} has {len(answers)} results"


def history_problems(request: dict) -> list[str]:
    """What `assert_history_valid` finds wrong with `request`, as a tally's problems."""
    try:
        assert_history_valid(request)
    except AssertionError as exc:
        return [f"history: {exc}"]
    return []


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (ProcessLookupError, OSError):
        return False
    return state != "Z"


MARK_VARIABLE = "DEEPACP_TEST_MARK"


def marked(command: str, marker: str) -> str:
    """`command` with every process it starts marked by `marker` in its environment, so a
    test can find them from outside the sandbox's PID namespace (`marked_pids`)."""
    return f"export {MARK_VARIABLE}={marker}; {command}"


def marked_pids(marker: str) -> list[int]:
    """Live processes whose environment carries `marker` (see `marked`)."""
    needle = f"{MARK_VARIABLE}={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0") and pid_alive(int(entry.name)):
            found.append(int(entry.name))
    return found
