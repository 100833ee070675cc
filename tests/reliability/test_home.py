"""`$DEEPACP_HOME`: private whoever created it, reachable only through the `/user/` routes
even when the workspace contains it, and a corrupt database is an error the user can act
on, never a dead server."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from acp import RequestError
from acp import schema as S

from tests.support.acp import DEEPACP
from tests.support.reliability import size

CANARY = "OTHER-PROJECT-CANARY"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def own_files(home: Path) -> list[Path]:
    """The files deepacp itself keeps in the home: databases, their journals, logs."""
    found = [p for p in home.glob("*.db*") if p.is_file()]
    return found + [p for p in (home / "logs").glob("deepacp.log*") if p.is_file()]


async def test_a_home_made_beforehand_becomes_private(agent_factory, tally, tmp_path) -> None:
    t = tally("home: private modes")
    home = tmp_path / "home"
    (home / "logs").mkdir(parents=True)
    home.chmod(0o755)
    (home / "logs").chmod(0o755)
    (home / "logs" / "deepacp.log").write_text("old line\n")
    (home / "logs" / "deepacp.log").chmod(0o644)
    async with agent_factory([{"content": "hi"}], home=home) as agent:
        session = await agent.new_session()
        await agent.prompt(session, "hello")
        t.record(mode(home) == 0o700, f"home is {oct(mode(home))}")
        t.record(mode(home / "logs") == 0o700, f"logs is {oct(mode(home / 'logs'))}")
        files = own_files(home)
        t.record(len(files) >= 3, f"only {files}")
        for path in files:
            t.record(mode(path) == 0o600, f"{path.name} is {oct(mode(path))}")
    t.check()


def doctor(home: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    script = tmp_path / "doctor-script.json"
    script.write_text('{"turns": []}')
    env = {**os.environ, "DEEPACP_HOME": str(home), "DEEPACP_MODEL": f"scripted:{script}"}
    return subprocess.run([DEEPACP, "doctor"], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.e2e
async def test_doctor_flags_modes_and_broken_databases(agent_factory, tally, tmp_path) -> None:
    t = tally("home: doctor checks modes and databases")
    home = tmp_path / "home"
    async with agent_factory([{"content": "hi"}], home=home) as agent:
        await agent.prompt(await agent.new_session(), "hello")
    healthy = doctor(home, tmp_path)
    t.record(healthy.returncode == 0, f"a healthy home fails: {healthy.stdout}")
    home.chmod(0o755)
    (home / "sessions.db").chmod(0o644)
    (home / "checkpoints.db").write_bytes(b"this is not a database" * 100)
    broken = doctor(home, tmp_path)
    fails = [line for line in broken.stdout.splitlines() if line.startswith("FAIL")]
    t.record(broken.returncode == 1, f"doctor exit {broken.returncode}")
    t.record(any("sessions.db" in f and "600" in f for f in fails), f"no mode FAIL: {fails}")
    t.record(any(f"{home} is" in f and "700" in f for f in fails), f"no home FAIL: {fails}")
    t.record(any("checkpoints.db" in f and "move it" in f for f in fails), f"no db FAIL: {fails}")
    t.check()


@pytest.mark.e2e
@pytest.mark.parametrize("database", ["sessions.db", "checkpoints.db"])
async def test_a_corrupt_database_is_a_clear_error(agent_factory, tally, tmp_path, database):
    t = tally("home: corrupt database")
    home = tmp_path / "home"
    home.mkdir()
    (home / database).write_bytes(b"garbage, not SQLite " * 200)
    async with agent_factory([{"content": "hi"}] * 3, home=home) as agent:
        for attempt in range(size(3, 10)):
            try:
                session = await agent.new_session()
                await agent.prompt(session, "hello")
                t.record(False, f"attempt {attempt}: no error")
            except RequestError as exc:
                message = str(exc)
                named = database in message and "move it aside" in message
                t.record(named, f"attempt {attempt}: {message[:300]}")
        t.record(agent.process.returncode is None, "the server exited")
        listed = await agent.raw_request("session/list", {}) if database != "sessions.db" else {}
        t.record(isinstance(listed, dict), "the server stopped answering")
    t.check()


async def test_the_home_inside_the_workspace_is_out_of_reach(agent_factory, tally, tmp_path):
    """The workspace is `~` (it contains `$DEEPACP_HOME`): the agent sees the user's
    AGENTS.md through `/user/`, and nothing else of the home, however it asks."""
    t = tally("home: out of reach from a workspace that contains it")
    user_home = tmp_path / "user"
    home = user_home / ".deepacp"
    offloaded = home / "scratch" / "other-thread" / "large_tool_results"
    offloaded.mkdir(parents=True)
    (offloaded / "abc").write_text(f"{CANARY} from another project\n")
    (home / "AGENTS.md").write_text("Remember: be brief.\n")
    (user_home / "notes.txt").write_text("my notes\n")
    calls = [
        ("grep", {"pattern": CANARY}),
        ("grep", {"pattern": CANARY, "path": ".deepacp"}),
        ("grep", {"pattern": CANARY, "glob": "**/large_tool_results/*"}),
        ("glob", {"pattern": "**/*.db"}),
        ("glob", {"pattern": "**/*", "path": ".deepacp"}),
        ("glob", {"pattern": ".deepacp/**"}),
        ("ls", {"path": ".deepacp"}),
        ("ls", {"path": ""}),
        ("read_file", {"file_path": ".deepacp/sessions.db"}),
        ("read_file", {"file_path": ".deepacp/scratch/other-thread/large_tool_results/abc"}),
        ("read_file", {"file_path": f"{home}/AGENTS.md"}),
        ("read_file", {"file_path": "/user/AGENTS.md"}),
    ]
    script = [{"id": f"c{i}", "name": n, "args": a} for i, (n, a) in enumerate(calls)]
    async with agent_factory(
        [{"tool_calls": script}, {"content": "done"}], home=home, workspace=user_home
    ) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="plan")
        await agent.prompt(session, "look around")
        cards = agent.client.cards(session)

        def shown(card_id: str) -> str:
            content = cards[card_id].get("content") or []
            return "".join(getattr(getattr(c, "content", None), "text", "") for c in content)

        for i, (name, args) in enumerate(calls):
            text = shown(f"c{i}")
            if args.get("file_path") == "/user/AGENTS.md":
                t.record("be brief" in text, f"/user/AGENTS.md unreadable: {text[:200]}")
                continue
            marks = ("from another project", "sessions.db", "scratch/", "be brief")
            leaked = any(mark in text for mark in marks) or ".deepacp/" in text.splitlines()
            refused = cards[f"c{i}"]["statuses"][-1] == "failed"  # its message names the path
            t.record(refused or not leaked, f"{name} {args}: {text[:200]}")
        t.record("notes.txt" in shown("c7"), f"the workspace itself is listed: {shown('c7')}")
        t.record(not agent.client.of(S.RequestPermissionRequest), "asked")
    t.check()
