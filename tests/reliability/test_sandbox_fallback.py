"""Where no sandbox can work — bwrap missing, or unable to create namespaces — the session
says so once, the picker offers only `off`, commands are asked about as before and their
cards say `off`, and `deepacp doctor` and `deepacp run` report it with the fix. Never a
silent "sandboxed" claim. Runs everywhere: it hides bwrap, or puts a broken one first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from acp import RequestError

from tests.reliability.test_sandbox import card_text, execute, set_sandbox
from tests.support.acp import DEEPACP, write_script

pytestmark = pytest.mark.e2e  # whether there is a sandbox is found once per process

NOTICE = "Commands are not sandboxed"
BROKEN_BWRAP = "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"
FIXES = {"missing": "install bubblewrap", "broken": "allow unprivileged user namespaces"}


def without_sandbox(tmp_path: Path, how: str) -> dict[str, str]:
    """An environment whose PATH has no bwrap (`missing`) or one that cannot start."""
    folder = tmp_path / "bin"
    folder.mkdir()
    if how == "broken":
        fake = folder / "bwrap"
        fake.write_text(BROKEN_BWRAP)
        fake.chmod(0o755)
    return {"PATH": str(folder)}


@pytest.mark.parametrize("how", sorted(FIXES))
async def test_without_a_sandbox_the_session_says_so_and_asks(
    agent_factory, tally, tmp_path: Path, how: str
) -> None:
    t = tally("sandbox: fallback")
    turns = [
        {"tool_calls": [execute("first", "echo ran > ran.txt")]},
        {"content": "ok"},
        {"tool_calls": [execute("second", "echo again")]},
        {"content": "ok"},
    ]
    async with agent_factory(turns, env=without_sandbox(tmp_path, how)) as agent:
        response = await agent.conn.new_session(cwd=str(agent.workspace), mcp_servers=[])
        session = response.session_id
        option = next(o for o in response.config_options if o.id == "sandbox")
        t.record(option.current_value == "off", f"picker: {option.current_value}")
        t.record([o.value for o in option.options] == ["off"], f"offered: {option.options}")
        t.record(FIXES[how] in (option.description or ""), f"why: {option.description}")
        await agent.conn.set_session_mode(session_id=session, mode_id="accept-edits")
        agent.client.answers = ["allow_once", "allow_once"]
        await agent.prompt(session, "run")
        await agent.prompt(session, "run again")
        asked = [r.tool_call.tool_call_id for r in agent.client.permission_requests]
        t.record(asked == ["first", "second"], f"asked: {asked}")
        t.record((agent.workspace / "ran.txt").exists(), "the approved command did not run")
        text = card_text(agent.client.cards()["first"])
        t.record("[sandbox: off]" in text, f"card: {text}")
        said = agent.client.text(session)
        t.record(said.count(NOTICE) == 1, f"notices: {said.count(NOTICE)}")
        t.record(FIXES[how] in said, f"no fix in: {said}")
        try:
            await set_sandbox(agent, session, "workspace-write")
            t.record(False, "a sandbox was claimed")
        except RequestError as exc:
            t.record("no sandbox is available here" in str(exc), f"error: {exc}")
    t.check()


@pytest.mark.parametrize("how", sorted(FIXES))
def test_doctor_and_run_report_the_missing_sandbox_with_the_fix(
    tally, tmp_path: Path, how: str
) -> None:
    t = tally("sandbox: doctor and run")
    script = write_script(
        tmp_path / "script.json",
        [{"tool_calls": [execute("c", "echo hi")]}, {"content": "done"}],
    )
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("DEEPACP_")},
        **without_sandbox(tmp_path, how),
        "DEEPACP_HOME": str(tmp_path / "home"),
        "DEEPACP_MODEL": f"scripted:{script}",
    }
    doctor = subprocess.run(
        [DEEPACP, "doctor"], capture_output=True, text=True, timeout=120, env=env
    )
    lines = [line for line in doctor.stdout.splitlines() if NOTICE.lower() in line.lower()]
    t.record(doctor.returncode == 0, f"doctor exit {doctor.returncode}: {doctor.stdout}")
    t.record(len(lines) == 1 and lines[0].startswith("warn"), f"doctor: {doctor.stdout}")
    t.record(bool(lines) and FIXES[how] in lines[0], f"no fix: {lines}")
    named = f"(uid {os.geteuid()})"  # whose user namespaces are missing
    t.record(how == "missing" or (bool(lines) and named in lines[0]), f"no user: {lines}")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    run = subprocess.run(
        [DEEPACP, "run", "--mode", "yolo", "--cwd", str(workspace), "say hi"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    t.record(run.returncode == 0, f"run exit {run.returncode}: {run.stderr}")
    t.record(run.stdout.count(NOTICE) == 1, f"run said: {run.stdout}")
    t.check()


@pytest.mark.slow(reason="a pytest run of its own, which collects and imports two files")
def test_the_sandbox_tests_skip_with_the_reason_where_there_is_none(tmp_path: Path) -> None:
    tests = Path(__file__).parent
    files = [str(tests / "test_sandbox.py"), str(tests / "test_sandbox_policies.py")]
    env = {**os.environ, **without_sandbox(tmp_path, "missing")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-n", "0", *files],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tests.parents[1],
    )
    assert done.returncode == 0, done.stdout
    assert "passed" not in done.stdout and "skipped" in done.stdout
    assert "no sandbox here: bwrap is not installed" in done.stdout
