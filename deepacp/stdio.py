"""stdin as the servers (`deepacp --stdio`, `deepacp lsp`) read it: whatever it is, and
whoever started them.

A terminal is one open file shared by every process on it, so its flags are too: asyncio
makes stdout non-blocking, which on a terminal makes stdin non-blocking, and a program run
before may have left it so. A read then fails with EAGAIN when nothing was typed yet, and
an ordinary reader takes that for the end of input. `stdin_reader` waits instead. A person
who starts a server by hand in a terminal is told once, on stderr, what it is.
"""

from __future__ import annotations

import io
import os
import select
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

BUFFER_BYTES = 1 << 20


class _Waiting(io.RawIOBase):
    """A file descriptor read as if it were blocking, whatever its flags say."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd = fd

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def readinto(self, buffer: WriteableBuffer) -> int:
        while True:
            try:
                return os.readv(self.fd, [buffer])
            except BlockingIOError:  # nothing yet on a non-blocking terminal or pipe
                select.select([self.fd], [], [])


def stdin_reader() -> io.BufferedReader:
    """This process's stdin, buffered; empty reads only at the end of input."""
    return io.BufferedReader(_Waiting(0), BUFFER_BYTES)


def say_if_terminal(text: str) -> None:
    """Tell a person who started this server in a terminal what it is (on stderr)."""
    if os.isatty(0):
        print(text, file=sys.stderr, flush=True)
