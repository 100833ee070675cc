"""`deepacp run` on a terminal (a real pty for stdin, stdout and stderr, as a shell gives
it): a status line while it waits, erased before anything else is printed; the model's
thinking labelled and on its own lines, apart from the answer; and an edit's diff shown
before the question whether to make it."""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import termios
import time
from pathlib import Path

from deepacp.run import exits
from tests.support.acp import DEEPACP
from tests.support.cli import write_script
from tests.support.turns import edit

WAIT_SECONDS = 60  # only a failing test waits this long
ERASE = b"\r\x1b[K"
EDIT = [
    {"reasoning": "The constant is off by one.", **edit("e", "a.py", "1", "2", said="Editing.")},
    {"content": "Done."},
]


def rendered(shown: bytes) -> list[str]:
    """The lines a terminal shows at the end: a carriage return and erase-line clear the
    line the cursor is on, as a terminal does."""
    lines = [""]
    for piece in re.split(rb"(\r\x1b\[K|\n)", shown):
        if piece == ERASE:
            lines[-1] = ""
        elif piece == b"\n":
            lines.append("")
        else:
            lines[-1] += piece.decode()
    return lines


class Pty:
    def __init__(self, command: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.master, slave = os.openpty()
        settings = termios.tcgetattr(slave)
        settings[1] &= ~termios.OPOST  # what deepacp writes, unchanged
        termios.tcsetattr(slave, termios.TCSANOW, settings)
        self.process = subprocess.Popen(
            command, cwd=cwd, env={**os.environ, **env}, stdin=slave, stdout=slave, stderr=slave
        )
        os.close(slave)
        self.shown = b""

    def until(self, wanted: bytes) -> bytes:
        deadline = time.monotonic() + WAIT_SECONDS
        while wanted not in self.shown:
            left = deadline - time.monotonic()
            assert left > 0, f"waited for {wanted!r}; the terminal shows {self.shown!r}"
            if select.select([self.master], [], [], left)[0]:
                try:
                    self.shown += os.read(self.master, 65536)
                except OSError:  # the process ended and closed the terminal
                    break
        return self.shown

    def close(self) -> int:
        code = self.process.wait(WAIT_SECONDS)
        os.close(self.master)
        return code


def test_a_terminal_shows_status_thinking_apart_and_the_diff_before_the_question(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    env = {"DEEPACP_HOME": str(tmp_path / "home")}
    term = Pty([DEEPACP, "run", "--model", write_script(tmp_path, EDIT), "bump"], tmp_path, env)
    try:
        asked = term.until(b"[y]es, [a]lways, [n]o: ")
        os.write(term.master, b"y\n")
        shown = term.until(b"[end_turn; session ")
        shown = term.until(b"]\n")
    finally:
        code = term.close()
    assert code == exits.OK, shown
    assert (tmp_path / "a.py").read_text() == "x = 2\n"
    assert ERASE + "starting…".encode() in shown and ERASE + "thinking…".encode() in shown
    screen = rendered(shown)
    assert not [line for line in screen if "…" in line]  # every status line was erased
    assert "thinking: The constant is off by one." in screen  # labelled, a line of its own
    assert "Editing." in screen
    question = screen.index("   allow 'Edit a.py'?")
    assert screen[question - 2 : question] == ["-x = 1", "+x = 2"]  # the diff, then the question
    assert asked.count(b"+x = 2") == 1 == shown.count(b"+x = 2")  # shown once, before
    assert screen.index("Done.") > question


def test_ctrl_c_cancels_the_turn_and_exits_130(tmp_path: Path) -> None:
    cwd, env = tmp_path, {"DEEPACP_HOME": str(tmp_path / "home")}
    call = {"id": "s", "name": "execute", "args": {"command": "sleep 60"}}
    model = write_script(tmp_path, [{"tool_calls": [call]}, {"content": "slept"}])
    argv = [DEEPACP, "run", "--output-format", "stream-json", "--mode", "yolo", "--model", model]
    process = subprocess.Popen(
        [*argv, "--sandbox", "off", "nap"],
        cwd=cwd,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:  # until the command runs
        if json.loads(line) == {"type": "tool_call", "id": "s", "status": "running"}:
            break
    process.send_signal(signal.SIGINT)
    rest, err = process.communicate(timeout=30)
    assert process.returncode == exits.CANCELLED, err
    result = json.loads(rest.splitlines()[-1])
    assert result["stop_reason"] == "cancelled" and result["exit_code"] == exits.CANCELLED
