"""`deepacp doctor` and the server log, as a user meets them when the editor says the agent
failed to start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from acp import RequestError

from deepacp.doctor import detect_editor

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


@pytest.mark.parametrize(
    ("env", "editor"),
    [
        ({"ZED_TERM": "true"}, "zed"),
        ({"TERM_PROGRAM": "vscode"}, "vscode"),
        ({"TERMINAL_EMULATOR": "JetBrains-JediTerm"}, "jetbrains"),
        ({"NVIM": "/run/nvim.sock"}, "neovim"),
        ({"INSIDE_EMACS": "29.1,vterm"}, "emacs"),
        ({"TERM_PROGRAM": "iTerm.app"}, None),
    ],
)
def test_detect_editor(env: dict[str, str], editor: str | None) -> None:
    assert detect_editor(env) == editor


async def test_server_log_file_records_failures_with_secrets_redacted(agent_factory) -> None:
    turns = [{"error": f"401 invalid x-api-key {CANARY}", "error_type": "auth"}]
    async with agent_factory(turns, env={"ANTHROPIC_API_KEY": CANARY}) as agent:
        session = await agent.new_session()
        with pytest.raises(RequestError) as info:
            await agent.prompt(session, "hello")
        wire_error = str(info.value.data or info.value)
        assert "401 invalid x-api-key [redacted]" in wire_error and CANARY not in wire_error
    log = (agent.home / "logs" / "deepacp.log").read_text()
    assert "turn failed" in log and "[redacted]" in log
    assert CANARY not in log


def test_the_session_database_is_reported_when_configured(tmp_path: Path, postgres_server) -> None:
    import psycopg

    from deepacp.session.storage.migrations import LATEST, migrate
    from tests.support.postgres import free_port

    script = tmp_path / "script.json"
    script.write_text('{"turns": []}')
    password = "hunter2-database-pw"
    url = postgres_server.new_database(password=password)
    shown = url.replace(f":{password}", "")
    result = doctor(tmp_path, DEEPACP_MODEL=f"scripted:{script}", DEEPACP_DATABASE_URL=url)
    assert f"ok   session database {shown} is reachable (PostgreSQL" in result.stdout
    assert f"warn session database schema version 0: deepacp migrates it to {LATEST}" in (
        result.stdout
    )
    with psycopg.connect(url, autocommit=True) as conn:
        migrate(conn)
    result = doctor(tmp_path, DEEPACP_MODEL=f"scripted:{script}", DEEPACP_DATABASE_URL=url)
    assert result.returncode == 0, result.stdout
    assert f"ok   session database schema version {LATEST}" in result.stdout

    down = f"postgresql://deepacp:{password}@127.0.0.1:{free_port()}/deepacp"
    result = doctor(tmp_path, DEEPACP_MODEL=f"scripted:{script}", DEEPACP_DATABASE_URL=down)
    assert result.returncode == 1
    [failed] = [line for line in result.stdout.splitlines() if line.startswith("FAIL")]
    assert "session database postgresql://deepacp@127.0.0.1" in failed
    assert password not in result.stdout + result.stderr
