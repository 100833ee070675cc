"""What `deepacp COMMAND --help` and `deepacp doctor` tell a user who has nothing but the
installed command, run in this process (tests/support/cli.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.test_help_pages import user_env
from tests.support.cli import deepacp


def description(page: str) -> str:
    """The prose between a help page's usage lines and its options."""
    return page.split("\n\n", 1)[1].rsplit("\noptions:", 1)[0]


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("lsp", ["Language Server Protocol", "proposal", "DEEPACP_LOG_LEVEL"]),
        ("doctor", ["failed to start", "full path", "snippet"]),
        ("setup", ["API key", "keyring", "credentials.json", "config.toml", "deepacp logout"]),
        ("logout", ["credentials.json", "environment"]),
        ("demo", ["no API key", "example project", "not touched"]),
    ],
)
def test_every_command_has_a_help_page(command: str, says: list[str]) -> None:
    shown = deepacp(command, "--help", env={**os.environ, "COLUMNS": "100"})
    assert shown.returncode == 0, shown.stderr
    prose = " ".join(description(shown.stdout).split())
    assert len(prose) > 150, shown.stdout
    for words in says:
        assert words in prose, (words, shown.stdout)


def test_run_help_shows_user_facing_names_only() -> None:
    shown = deepacp("run", "--help").stdout
    assert "--model MODEL" in shown
    assert "RUN_" not in shown  # argparse's dest, not a name a user knows


@pytest.mark.e2e  # the doctor's own check starts `deepacp --stdio`
def test_doctor_without_a_model_points_to_setup(tmp_path: Path) -> None:
    env = user_env(tmp_path / "home")
    for name in ("ZED_TERM", "TERM_PROGRAM", "TERMINAL_EMULATOR", "NVIM", "INSIDE_EMACS"):
        env.pop(name, None)
    result = deepacp("doctor", env=env)
    assert result.returncode == 1
    [line] = [line for line in result.stdout.splitlines() if "no model configured" in line]
    assert "deepacp setup" in line
