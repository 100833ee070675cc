"""The LSP base protocol on the way in: frames read leniently and checked before pygls
reads them.

pygls takes a header only as `Content-Length: N` ended by CRLF (a terminal ends a typed
line with LF alone), and a body that is not a JSON-RPC object costs a logged traceback and
no answer. So frames are read here first: header lines may end in LF, header names in any
case, and blank lines between frames are skipped. A body that is not JSON, not an object
or not JSON-RPC 2.0 is answered with a JSON-RPC error (-32700 or -32600, under its id when
it has one) and one log line, and pygls never sees it; every other frame is handed on
framed the way pygls reads it.
"""

from __future__ import annotations

import json
import logging
from typing import IO, Any, Protocol

log = logging.getLogger(__name__)


class Stream(Protocol):
    def readline(self) -> bytes: ...

    def read(self, size: int = -1) -> bytes: ...


def read_headers(stream: Stream) -> tuple[bytes, int | None, bool]:
    """One header block: its bytes as read, its Content-Length (None: none given, or a
    blank line), and whether the input ended first."""
    raw = b""
    length = None
    while line := stream.readline():
        raw += line
        if line in (b"\r\n", b"\n"):
            return raw, length, False
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length" and value.strip().isdigit():
            length = int(value.strip())
    return raw, length, True


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def problem(body: bytes) -> tuple[Any, int, str] | None:
    """Why `body` is no JSON-RPC message, as (id, error code, message); None when it is one."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deep
        return None, -32700, f"Parse error: {str(exc)[:200]}"
    if not isinstance(message, dict):
        return None, -32600, "Invalid Request: not a JSON object"
    if message.get("jsonrpc") != "2.0":
        request_id = message.get("id")
        if isinstance(request_id, bool) or not isinstance(request_id, int | str):
            request_id = None
        return request_id, -32600, 'Invalid Request: "jsonrpc" must be "2.0"'
    return None


class Frames:
    """What pygls reads: the JSON-RPC messages of `source`, each framed the way pygls takes
    it; any other frame is answered on `out`."""

    def __init__(self, source: Stream, out: IO[bytes]) -> None:
        self.source = source
        self.out = out
        self.pending = b""

    def readline(self) -> bytes:
        if not self.pending:
            self.pending = self._next()
        line, newline, self.pending = self.pending.partition(b"\n")
        return line + newline

    def read(self, size: int = -1) -> bytes:
        size = len(self.pending) if size < 0 else size
        taken, self.pending = self.pending[:size], self.pending[size:]
        return taken

    def _next(self) -> bytes:
        """The next good frame; empty at the end of input."""
        while True:
            raw, length, ended = read_headers(self.source)
            if ended:
                return b""
            if length is None:
                if raw.strip():
                    log.warning("skipped a header block without Content-Length")
                continue
            body = self.source.read(length)
            if len(body) < length:
                return b""
            wrong = problem(body)
            if wrong is None:
                return frame(body)
            request_id, code, message = wrong
            log.warning("answered a message that is not JSON-RPC: %s", message)
            error = {"code": code, "message": message}
            answer = {"jsonrpc": "2.0", "id": request_id, "error": error}
            self.out.write(frame(json.dumps(answer).encode("utf-8")))
            self.out.flush()
