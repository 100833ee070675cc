"""Which editor `deepacp doctor` thinks it runs in, from the environment."""

from __future__ import annotations

import pytest

from deepacp.doctor import detect_editor


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
