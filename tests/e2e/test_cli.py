"""The installed `deepacp demo`, run as a user runs it: it drives `deepacp --stdio` in a
process of its own, then a fresh one that redraws the session (`deepacp run` and the other
commands are tested in this process: tests/inprocess/test_run.py)."""

import os
import subprocess
import sys
from pathlib import Path

DEEPACP = str(Path(sys.executable).parent / "deepacp")


def run(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 120):
    return subprocess.run(
        [DEEPACP, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
    )


def test_demo_drives_the_acp_server_and_reloads_the_session(tmp_path: Path) -> None:
    result = run("demo", env={"DEEPACP_HOME": str(tmp_path), "TMPDIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "connected to deepacp" in out
    assert "plan:" in out and "[x] Fix the bug" in out
    fixed = "+    return (ordered[middle - 1] + ordered[middle]) / 2"
    asked = out.index("permission asked for `Edit stats.py`: auto-approved")
    assert out.count(fixed) == 1 and out.index(fixed) < asked  # the diff, then the question
    assert "all three tests pass" in out and "(turn ended: end_turn)" in out
    assert "The fresh server redrew the whole conversation from disk (your message" in out
    assert "agent_message_chunk" not in out and "tool_call_update" not in out
    kept = Path(out.split("The fixed project is kept in ")[1].split(":")[0])
    assert kept.parent.parent == tmp_path  # the folder it names, still there
    assert fixed[1:] in (kept / "stats.py").read_text()
