"""What an editor's terminal is asked to run for a sandboxed command is short and shows the
user's command: `deepacp sandbox --args FILE -- /bin/sh -c '<command>'`, not bwrap's forty
arguments; the command still runs sandboxed."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepacp.backends.sandbox import sandbox_problem
from tests.support.terminals import in_the_editors_terminal


@pytest.mark.skipif(sandbox_problem() is not None, reason="no working bwrap here")
async def test_the_terminal_runs_a_short_command_that_applies_the_sandbox(
    agent_factory, editor_client, capabilities, tmp_path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    command = f"echo x > {outside}/pwned; echo in > inside.txt"
    run = {"id": "t", "name": "execute", "args": {"command": command}}
    turns = [{"tool_calls": [run]}, {"content": "ok"}]
    async with in_the_editors_terminal(agent_factory, editor_client, capabilities, turns) as (
        agent,
        [created],
    ):
        shown = [created["command"], *created["args"]]
        assert Path(shown[0]).name == "deepacp" and shown[1:3] == ["sandbox", "--args"]
        assert shown[4:] == ["--", "/bin/sh", "-c", command]
        assert not Path(shown[3]).exists()  # bwrap's arguments were read and removed
        assert (agent.workspace / "inside.txt").read_text() == "in\n"
        assert not (outside / "pwned").exists()  # the sandbox held
