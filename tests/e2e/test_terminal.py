"""`deepacp --stdio` and `deepacp lsp` started by hand in a terminal (a real pty): they keep
reading it, say once on stderr what they are and how an editor starts them, and answer
what is typed; bad input to `deepacp lsp` is answered without a traceback.

The terminal is one open file for stdin and stdout, as a shell gives it; it is run both
blocking and left non-blocking (by a program before, or by the server's own stdout),
where a read finds nothing yet instead of waiting."""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

DEEPACP = str(Path(sys.executable).parent / "deepacp")
WAIT_SECONDS = 60  # only a failing test waits this long
CTRL_D = b"\x04"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize"}


class Terminal:
    """A server on a pty: what is typed and what it prints there; its stderr apart."""

    def __init__(self, process: subprocess.Popen, master: int) -> None:
        self.process = process
        self.master = master
        self.shown = b""

    def type(self, text: bytes) -> None:
        os.write(self.master, text)

    def until(self, wanted: bytes) -> bytes:
        """What the server printed on the terminal, once it holds `wanted`."""
        deadline = time.monotonic() + WAIT_SECONDS
        while wanted not in self.shown:
            left = deadline - time.monotonic()
            assert left > 0, f"waited for {wanted!r}; the terminal shows {self.shown!r}"
            if select.select([self.master], [], [], left)[0]:
                self.shown += os.read(self.master, 65536)
        return self.shown

    def stderr_line(self) -> str:
        assert self.process.stderr is not None
        ready = select.select([self.process.stderr], [], [], WAIT_SECONDS)[0]
        assert ready, "nothing on stderr"
        return self.process.stderr.readline().decode()

    def quit(self) -> tuple[int, str]:
        """Ctrl-D at the start of a line: the exit status and the rest of stderr."""
        self.type(CTRL_D)
        _, rest = self.process.communicate(timeout=WAIT_SECONDS)
        return self.process.returncode, rest.decode()


@contextmanager
def terminal(command: list[str], home: Path, blocking: bool) -> Iterator[Terminal]:
    master, slave = os.openpty()
    settings = termios.tcgetattr(slave)
    settings[1] &= ~termios.OPOST  # what the server writes, unchanged
    settings[3] &= ~termios.ECHO  # what is typed is not shown back
    termios.tcsetattr(slave, termios.TCSANOW, settings)
    os.set_blocking(slave, blocking)
    process = subprocess.Popen(
        command,
        stdin=slave,
        stdout=slave,
        stderr=subprocess.PIPE,
        env={**os.environ, "DEEPACP_HOME": str(home)},
    )
    os.close(slave)
    try:
        yield Terminal(process, master)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        os.close(master)


def lsp_typed(body: bytes) -> bytes:
    """A message as a person types it: lines end with Enter (LF), the body too."""
    return b"Content-Length: %d\n\n" % len(body) + body + b"\n"


def lsp_messages(shown: bytes) -> list[dict]:
    messages = []
    for part in shown.split(b"Content-Length: ")[1:]:
        header, _, rest = part.partition(b"\r\n\r\n")
        length = int(header.split(b"\r\n")[0])
        messages.append(json.loads(rest[:length]))
    return messages


MODES = [pytest.param(True, id="blocking"), pytest.param(False, id="left-non-blocking")]


@pytest.mark.parametrize("blocking", MODES)
def test_acp_server_in_a_terminal_says_what_it_is_and_answers(
    tmp_path: Path, blocking: bool
) -> None:
    with terminal([DEEPACP, "--stdio"], tmp_path / "home", blocking) as term:
        said = term.stderr_line()
        assert said.startswith("deepacp --stdio: the Agent Client Protocol server an editor")
        assert "deepacp doctor" in said
        request = {**INITIALIZE, "params": {"protocolVersion": 1}}
        term.type(json.dumps(request).encode() + b"\n")
        [line] = term.until(b"\n").splitlines()
        answer = json.loads(line)
        assert answer["id"] == 1 and answer["result"]["protocolVersion"] == 1
        status, rest = term.quit()
    assert status == 0
    assert "deepacp --stdio:" not in rest and "Traceback" not in rest  # said once


@pytest.mark.parametrize("blocking", MODES)
def test_lsp_server_in_a_terminal_says_what_it_is_and_answers(
    tmp_path: Path, blocking: bool
) -> None:
    with terminal([DEEPACP, "lsp"], tmp_path / "home", blocking) as term:
        said = term.stderr_line()
        assert said.startswith("deepacp lsp: the language server for inline review")
        assert "deepacp doctor" in said
        request = {**INITIALIZE, "params": {"capabilities": {}}}
        term.type(lsp_typed(json.dumps(request).encode()))
        [answer] = lsp_messages(term.until(b'"result"'))
        assert answer["id"] == 1 and "deepacp.edit" in json.dumps(answer["result"])
        status, rest = term.quit()
    assert status == 0
    assert "deepacp lsp:" not in rest and "Traceback" not in rest


def test_bad_input_to_the_lsp_server_is_answered_without_a_traceback(tmp_path: Path) -> None:
    bad = [
        (b"not json", -32700),
        (b"[1, 2]", -32600),
        (b'{"id": 7, "method": "initialize"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 8, "method": "initialize", "params": {}}', -32602),
    ]
    with terminal([DEEPACP, "lsp"], tmp_path / "home", blocking=True) as term:
        term.stderr_line()
        for body, _ in bad:
            term.type(lsp_typed(body))
        request = {**INITIALIZE, "params": {"capabilities": {}}}
        term.type(lsp_typed(json.dumps(request).encode()))
        answers = [m for m in lsp_messages(term.until(b'"result"')) if "method" not in m]
        status, rest = term.quit()
    assert [a.get("error", {}).get("code") for a in answers] == [c for _, c in bad] + [None]
    assert [a["id"] for a in answers] == [None, None, 7, 8, 1]  # the server stayed up
    assert status == 0
    assert "Traceback" not in rest and "  File " not in rest
    assert all(re.match(r"\d{4}-\d\d-\d\d ", line) for line in rest.splitlines())  # one each
