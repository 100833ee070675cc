"""`deepacp doctor`, as a user meets it when the editor says the agent failed to start, run
in this process (tests/support/cli.py); the checks that need another Python path are in
tests/e2e/test_doctor.py. Marked `e2e`: the doctor's own check starts `deepacp --stdio`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.test_doctor import EDITOR_VARIABLES
from tests.support.acp import DEEPACP
from tests.support.cli import deepacp

pytestmark = pytest.mark.e2e


def doctor(tmp_path: Path, **env: str):
    base = {k: v for k, v in os.environ.items() if k not in EDITOR_VARIABLES}
    return deepacp("doctor", env={**base, "DEEPACP_HOME": str(tmp_path / "home"), **env})


def test_a_working_setup_passes_and_prints_the_snippet_for_the_editor(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text('{"turns": []}')
    result = doctor(tmp_path, DEEPACP_MODEL=f"scripted:{script}", ZED_TERM="1")
    assert result.returncode == 0, result.stdout
    lines = result.stdout.splitlines()
    assert not [line for line in lines if line.startswith("FAIL")]
    assert any("from DEEPACP_MODEL" in line for line in lines)
    assert any("answers initialize" in line for line in lines)
    assert f"logs: {tmp_path / 'home' / 'logs' / 'deepacp.log'}" in lines
    assert "You seem to be in Zed" in result.stdout and '"agent_servers"' in result.stdout


@pytest.mark.parametrize(
    ("env", "command"),
    [
        ({"ZED_TERM": "1"}, f'"command": "{DEEPACP}"'),
        ({"INSIDE_EMACS": "29.1,vterm"}, f'"{DEEPACP}" "lsp")'),
        ({"HELIX_RUNTIME": "/usr/lib/helix/runtime"}, f'command = "{DEEPACP}"'),
        ({"NVIM": "/run/nvim.sock"}, f'cmd = {{ "{DEEPACP}", "lsp" }}'),
    ],
)
def test_the_snippet_names_deepacp_by_its_full_path_and_sets_no_key(
    tmp_path: Path, env: dict[str, str], command: str
) -> None:
    script = tmp_path / "script.json"
    script.write_text('{"turns": []}')
    # As from an editor started outside the venv: `deepacp` is not on this PATH.
    result = doctor(tmp_path, DEEPACP_MODEL=f"scripted:{script}", PATH="/usr/bin:/bin", **env)
    assert f"command: {DEEPACP} (give an editor this full path" in result.stdout
    assert command in result.stdout
    assert 'API_KEY"' not in result.stdout and "sk-ant-" not in result.stdout


def test_no_model_fails_and_says_what_to_set(tmp_path: Path) -> None:
    result = doctor(tmp_path, DEEPACP_MODEL="")
    assert result.returncode == 1
    assert any(
        line.startswith("FAIL") and "DEEPACP_MODEL" in line for line in result.stdout.splitlines()
    )
    assert "Traceback" not in result.stdout + result.stderr


def test_an_unwritable_home_fails(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = doctor(tmp_path, DEEPACP_HOME=str(blocker / "home"), DEEPACP_MODEL="")
    assert result.returncode == 1
    assert any("is not writable" in line for line in result.stdout.splitlines())
