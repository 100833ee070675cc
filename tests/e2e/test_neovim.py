"""A real editor: headless Neovim runs the shipped Lua module against `deepacp lsp`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NVIM = shutil.which("nvim")

pytestmark = pytest.mark.skipif(
    NVIM is None, reason="Neovim is not installed (.ci/run installs it)"
)


def test_neovim_edit_accept_and_write(tmp_path: Path) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    target = workspace / "version.py"
    target.write_text("VERSION = '1.0.0'\n")
    script = tmp_path / "script.json"
    edit = {"file_path": "version.py", "old_string": "1.0.0-unsaved", "new_string": "1.1.0"}
    script.write_text(
        json.dumps(
            {
                "turns": [
                    {"tool_calls": [{"id": "e", "name": "edit_file", "args": edit}]},
                    {"content": "Bumped to 1.1.0."},
                ]
            }
        )
    )
    result = tmp_path / "result.txt"
    env = {
        **os.environ,
        "DEEPACP_HOME": str(tmp_path / "home"),
        "DEEPACP_BIN": str(Path(sys.executable).parent / "deepacp"),
        "DEEPACP_NVIM_RTP": str(ROOT / "editors" / "neovim"),
        "DEEPACP_TEST_MODEL": f"scripted:{script}",
        "DEEPACP_TEST_FILE": str(target),
        "DEEPACP_TEST_RESULT": str(result),
    }
    completed = subprocess.run(
        [
            NVIM,
            "--headless",
            "-n",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-c",
            f"luafile {ROOT / 'tests' / 'e2e' / 'nvim_accept.lua'}",
        ],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    outcome = (
        result.read_text() if result.exists() else f"no result; stderr: {completed.stderr[-2000:]}"
    )
    assert outcome.startswith("OK"), outcome
    # The proposal was made against the unsaved buffer, and reached disk only on :write.
    assert target.read_text() == "VERSION = '1.1.0'\n"
