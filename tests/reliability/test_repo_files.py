"""A cloned repository cannot freeze the server through the files deepacp reads for
itself: `.deepacp/hooks.json` and `.gitignore` linked to `/dev/stdin` (the ACP pipe
itself), to `/dev/zero` (endless bytes) or made a FIFO (a read that never returns) are
refused unread, and every request is still answered, each within a bound far above what
it takes."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from acp import schema as S

from tests.support.acp import DEEPACP

pytestmark = pytest.mark.slow(
    reason="each starts its own server; with a FIFO .gitignore, rg waits 10 s silent before "
    "deepacp walks the tree itself, and under another suite's load the case took 30 s"
)

BOUND = 60.0
MEMORY = 4 << 30
"""The server's address space in these tests: reading `/dev/zero` whole must fail at this
size, never eat the machine's memory."""


def plant(workspace: Path, name: str, target: str) -> None:
    path = workspace / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if target == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(target)


def command_turns(mark: str) -> list[dict]:
    run = {"id": "x", "name": "execute", "args": {"command": f"echo {mark}"}}
    return [{"tool_calls": [run]}, {"content": "ran it"}]


async def answered(agent, session: str, text: str) -> S.PromptResponse:
    response = await asyncio.wait_for(agent.prompt(session, text), BOUND)
    await asyncio.wait_for(agent.conn.list_sessions(), BOUND)  # and the next request too
    return response


@pytest.mark.e2e
@pytest.mark.parametrize("target", ["/dev/stdin", "/dev/zero", "fifo"])
async def test_a_hooks_file_that_is_no_file_is_refused_unread(agent_factory, target) -> None:
    """Read at the first prompt, before any trust question."""
    limit = ("prlimit", f"--as={MEMORY}", DEEPACP, "--stdio")
    async with agent_factory([{"content": "hello"}], command=limit) as agent:
        plant(agent.workspace, ".deepacp/hooks.json", target)
        session = await agent.new_session()
        assert (await answered(agent, session, "hi")).stop_reason == "end_turn"
        assert agent.client.text(session).endswith("hello")
        assert "not a regular file" in agent.client.text(session)
        assert agent.client.permission_requests == []  # nothing to trust


@pytest.mark.e2e
@pytest.mark.parametrize("target", ["/dev/stdin", "/dev/zero", "fifo"])
async def test_a_gitignore_that_is_no_file_is_refused_unread(agent_factory, target) -> None:
    """Read by the restore-point scan before and after every command."""
    limit = ("prlimit", f"--as={MEMORY}", DEEPACP, "--stdio")
    async with agent_factory(command_turns("CMD-RAN"), command=limit) as agent:
        plant(agent.workspace, ".gitignore", target)
        plant(agent.workspace, "sub/.gitignore", target)
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        assert (await answered(agent, session, "run it")).stop_reason == "end_turn"
        card = next(iter(agent.client.cards(session).values()))
        assert card["statuses"][-1] == "completed" and "CMD-RAN" in str(card["content"])
