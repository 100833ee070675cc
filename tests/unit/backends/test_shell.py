import asyncio
import os
import time
from pathlib import Path

from deepacp.backends import LocalShellBackend, ShellCommand
from deepacp.backends.shell import command_environment


def _alive(pid: int) -> bool:
    """True if `pid` runs (a zombie waiting for a reaper does not count)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    backend = LocalShellBackend(tmp_path)
    result = await backend.shell.execute(ShellCommand("sleep 30 & echo $! > child.pid; wait", 0.5))
    assert result.timed_out and result.exit_code is None
    child = int((tmp_path / "child.pid").read_text())
    await asyncio.sleep(0.1)
    assert not _alive(child)


async def test_cancel_kills_the_command_promptly(tmp_path: Path) -> None:
    backend = LocalShellBackend(tmp_path)
    task = asyncio.create_task(backend.shell.execute(ShellCommand("echo $$ > shell.pid; sleep 30")))
    while not (tmp_path / "shell.pid").exists() or not (tmp_path / "shell.pid").read_text():
        await asyncio.sleep(0.01)
    started = time.monotonic()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    assert time.monotonic() - started < 1.0
    assert not _alive(int((tmp_path / "shell.pid").read_text()))


async def test_output_streams_and_is_capped(tmp_path: Path) -> None:
    backend = LocalShellBackend(tmp_path, max_output=1000)
    pieces: list[str] = []
    result = await backend.shell.execute(ShellCommand("seq 1 2000", on_output=pieces.append))
    assert "".join(pieces).splitlines()[-1] == "2000"
    assert result.truncated and "characters of output omitted" in result.output
    assert result.output.startswith("1\n") and result.output.rstrip().endswith("2000")


def test_credentials_are_not_passed_to_commands() -> None:
    env = command_environment(
        {"PATH": "/bin", "ANTHROPIC_API_KEY": "sk-x", "OPENAI_API_KEY": "sk-y", "HOME": "/h"}
    )
    assert env["PATH"] == "/bin" and env["HOME"] == "/h"
    assert "ANTHROPIC_API_KEY" not in env and "OPENAI_API_KEY" not in env
    assert env["PAGER"] == "cat"
