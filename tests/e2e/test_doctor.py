"""`deepacp doctor`, as a user meets it when the editor says the agent failed to start, with
a provider package hidden or faked by a Python path of its own (the other checks run in
this process: tests/inprocess/test_doctor.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
