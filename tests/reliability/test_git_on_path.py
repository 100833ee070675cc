"""Attack: a workspace folder is on PATH (direnv's `PATH_add bin`, a project's tools), and
a command the model ran without asking plants an executable `git`, `bwrap` or `rg` there.
deepacp runs these itself, outside the sandbox: git for restore points and for the
accept-edits guard, bwrap to start the sandbox, rg for the grep and glob tools. What it
runs must never be the planted one, which would run with the user's rights.

Over `deepacp --stdio` with a scripted model, as root and as an ordinary user (`runner`).
The planted program touches a marker in the host's /tmp, which the sandbox hides, so only a
run outside the sandbox makes it; then it runs the real one, so nothing else shows it ran."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from deepacp.backends.ripgrep import ripgrep
from deepacp.backends.sandbox import sandbox_problem
from tests.reliability.test_git_guard import git, repository
from tests.reliability.test_sandbox import Host, card_text, execute, hosted
from tests.support.users import Runner

REAL_GIT = shutil.which("git")

pytestmark = [
    pytest.mark.services,
    pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox: {sandbox_problem()}"),
    pytest.mark.skipif(REAL_GIT is None, reason="git is not installed"),
]


@pytest.fixture
def host(runner: Runner) -> Iterator[Host]:
    with hosted(runner) as made:
        yield made


def plant(marker: Path, name: str = "git") -> str:
    """A command writing `bin/NAME`: it leaves `marker`, then runs the real one (if any)."""
    real = ripgrep() if name == "rg" else shutil.which(name)  # rg: the wheel's, beside Python
    script = f'#!/bin/sh\\ntouch {marker}\\nexec {real} "$@"\\n'
    return f"mkdir -p bin && printf '{script}' > bin/{name} && chmod +x bin/{name} && echo planted"


def with_bin_on_path(host: Host) -> dict[str, str]:
    """The host's environment, the workspace's `bin` first on PATH."""
    return {**host.env, "PATH": f"{host.workspace / 'bin'}{os.pathsep}{os.environ['PATH']}"}


@pytest.mark.slow(
    reason="three commands, each between two git restore points, in a server of its own"
)
async def test_a_git_planted_on_path_in_the_workspace_never_runs(host: Host, host_tmp) -> None:
    marker = host_tmp / "ran"
    turns = [
        {"tool_calls": [execute("plant", plant(marker))]},
        {"content": "planted"},
        # The index changes, and new files wait to be kept: the next restore point asks git.
        {"tool_calls": [execute("add", "echo new > new.txt && git add -A && echo added")]},
        {"content": "added"},
        {"tool_calls": [execute("later", "echo later > later.txt && echo later")]},
        {"content": "done"},
    ]
    async with host.start(turns, env=with_bin_on_path(host)) as agent:
        ws = agent.workspace
        repository(host, ws)
        (ws / "tracked.txt").write_text("tracked\n")
        host.runner.own(ws)
        git(host, ws, "add", "tracked.txt")
        git(host, ws, "commit", "-q", "-m", "tracked")
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="accept-edits")
        for prompt in ("plant it", "add it", "go on"):
            await agent.prompt(session, prompt)
        cards = agent.client.cards()
        for name, said in (("plant", "planted"), ("add", "added"), ("later", "later")):
            assert said in card_text(cards[name]), card_text(cards[name])
        assert agent.client.permission_requests == []
        assert os.access(ws / "bin" / "git", os.X_OK)
        assert not marker.exists(), "deepacp ran the git a command planted in the workspace"


@pytest.mark.parametrize("name", ["bwrap", "rg"])
async def test_a_bwrap_or_rg_planted_on_path_in_the_workspace_never_runs(
    host: Host, host_tmp, name: str
) -> None:
    """The next command starts the sandbox (bwrap); the model's grep and glob search (rg)."""
    marker = host_tmp / "ran"
    (host.workspace / "notes.txt").write_text("needle\n")
    later = [
        execute("later", "echo later"),
        {"id": "grep", "name": "grep", "args": {"pattern": "needle"}},
        {"id": "glob", "name": "glob", "args": {"pattern": "**/*.txt"}},
    ]
    turns = [
        {"tool_calls": [execute("plant", plant(marker, name))]},
        {"content": "planted"},
        {"tool_calls": later},
        {"content": "done"},
    ]
    async with host.start(turns, env=with_bin_on_path(host)) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="accept-edits")
        await agent.prompt(session, "plant it")
        await agent.prompt(session, "go on")
        cards = agent.client.cards()
        texts = {call: card_text(cards[call]) for call in ("plant", "later", "grep", "glob")}
        assert "planted" in texts["plant"] and "later" in texts["later"], texts
        assert "notes.txt" in texts["grep"] and "notes.txt" in texts["glob"], texts
        assert "[sandbox: workspace-write]" in texts["later"], texts
        assert agent.client.permission_requests == []
        assert not marker.exists(), f"deepacp ran the {name} a command planted in the workspace"
