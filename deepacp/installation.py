"""How this installation of deepacp is started: by an editor, the demo and the doctor."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def server_command() -> list[str]:
    """How this installation starts its ACP server (the demo and doctor start it so)."""
    return [sys.executable, "-m", "deepacp", "--stdio"]


def command_path() -> str:
    """The full path of this installation's `deepacp` command: an editor started outside
    the environment it is installed in cannot find a bare `deepacp`."""
    beside = Path(sys.executable).parent / "deepacp"  # a venv's, pipx's or uv's bin folder
    return str(beside) if beside.is_file() else shutil.which("deepacp") or "deepacp"
