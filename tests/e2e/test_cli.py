"""The installed `deepacp` command, run as a user runs it."""

import os
import shutil
import subprocess
import sys

from deepacp import __version__

DEEPACP = shutil.which("deepacp") or os.path.join(os.path.dirname(sys.executable), "deepacp")


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([DEEPACP, *args], capture_output=True, text=True, timeout=timeout)


def test_version_and_help() -> None:
    assert run("--version").stdout.strip() == f"deepacp {__version__}"
    help_text = run("--help").stdout
    assert "--stdio" in help_text and "demo" in help_text


def test_demo_fixes_the_example_project() -> None:
    result = run("demo")
    assert result.returncode == 0, result.stderr
    assert "+    return (ordered[middle - 1] + ordered[middle]) / 2" in result.stdout
    assert "all three tests pass" in result.stdout
