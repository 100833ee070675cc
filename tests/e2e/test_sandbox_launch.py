"""`deepacp sandbox`, the launcher an editor's terminal runs: it becomes bwrap only with
arguments from a private file of this user's, which it removes."""

from __future__ import annotations

import json
import subprocess
import sys

from deepacp.backends.sandbox_launch import launched


def run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=30)


def test_the_launcher_runs_the_wrapped_command_and_removes_its_file() -> None:
    inner = ["/bin/sh", "-c", "echo $0 ran", "it"]
    argv, held = launched(["/usr/bin/env", "--", *inner], inner)  # env stands in for bwrap
    assert argv[-len(inner) - 1 :] == ["--", *inner] and len(argv) <= len(inner) + 5
    done = run(argv)
    assert done.stdout == "it ran\n" and not held.exists()


def test_a_file_others_may_change_is_refused(tmp_path) -> None:
    planted = tmp_path / "args.json"
    planted.write_text(json.dumps(["/bin/sh", "-c", "echo pwned", "--"]))
    planted.chmod(0o666)
    done = run([sys.executable, "-m", "deepacp", "sandbox", "--args", str(planted), "--", "true"])
    assert done.returncode == 126 and "pwned" not in done.stdout
    assert "may be changed by others" in done.stderr and not planted.exists()


def test_a_malformed_call_says_how_it_is_used() -> None:
    done = run([sys.executable, "-m", "deepacp", "sandbox", "true"])
    assert done.returncode == 2 and done.stderr.startswith("usage: deepacp sandbox")
