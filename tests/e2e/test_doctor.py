"""`deepacp doctor` and the server log, as a user meets them when the editor says the agent
failed to start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

DEEPACP = str(Path(sys.executable).parent / "deepacp")
CANARY = "sk-ant-CANARY-0123456789abcdef"
EDITOR_VARIABLES = ("ZED_TERM", "TERM_PROGRAM", "TERMINAL_EMULATOR", "NVIM", "INSIDE_EMACS")


def doctor(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in EDITOR_VARIABLES}
    return subprocess.run(
        [DEEPACP, "doctor"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**base, "DEEPACP_HOME": str(tmp_path / "home"), **env},
    )


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


def test_missing_provider_package_names_the_extra(tmp_path: Path) -> None:
    site = tmp_path / "site"  # hides the extra, which the test extra installs
    site.mkdir()
    hide = "import sys\nsys.modules['langchain_anthropic'] = None\n"
    (site / "sitecustomize.py").write_text(hide)
    result = doctor(
        tmp_path,
        DEEPACP_MODEL="anthropic:claude-sonnet-4-5",
        ANTHROPIC_API_KEY=CANARY,
        PYTHONPATH=str(site),
    )
    assert result.returncode == 1
    assert "pip install 'deepacp[anthropic]'" in result.stdout
    assert CANARY not in result.stdout + result.stderr


def test_the_api_key_is_checked_but_never_printed(tmp_path: Path) -> None:
    provider = tmp_path / "site" / "langchain_anthropic"  # stands in for the installed extra
    provider.mkdir(parents=True)
    (provider / "__init__.py").write_text("")
    result = doctor(
        tmp_path,
        DEEPACP_MODEL="anthropic:claude-sonnet-4-5",
        ANTHROPIC_API_KEY=CANARY,
        PYTHONPATH=str(tmp_path / "site"),
    )
    assert "ANTHROPIC_API_KEY is set (value not shown)" in result.stdout
    assert CANARY not in result.stdout + result.stderr
    assert result.returncode == 0, result.stdout


def test_an_unwritable_home_fails(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = doctor(tmp_path, DEEPACP_HOME=str(blocker / "home"), DEEPACP_MODEL="")
    assert result.returncode == 1
    assert any("is not writable" in line for line in result.stdout.splitlines())
