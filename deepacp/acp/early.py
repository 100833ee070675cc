"""`initialize` answered as the process starts, before asyncio and the rest of the server
are imported (asyncio alone is a third of the time to the answer).

Only the usual case is answered here: an editor's pipe or socket whose first line is a
well-formed `initialize` request. Anything else (a terminal, a file, a first line that is
not one) is left to the server's handshake, which reads the bytes read here first, as if
they had not been read (`Early.rest`).
"""

from __future__ import annotations

import json
import os
import select
import stat
from dataclasses import dataclass
from typing import Any

from deepacp.acp.capabilities import InitializeParamsError, initialize_result

LINE_BYTES = 1 << 16
"""An `initialize` request is a few hundred bytes: a first line longer is left unread here."""


@dataclass(frozen=True)
class Early:
    """What was read before the server started: the `initialize` params if it was answered
    (None: it was not), and the bytes read after that request (or all of them)."""

    params: dict | None
    rest: bytes


def encode(message: dict) -> bytes:
    """One message as a frame: compact JSON, UTF-8, a newline."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode() + b"\n"
    except UnicodeEncodeError:  # a lone surrogate (a client's \ud800 escape, echoed back)
        return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def _first_line(fd: int) -> bytes:
    """What the client wrote up to its first newline (and after it, in the same reads);
    less at the end of input or past `LINE_BYTES`."""
    data = b""
    while b"\n" not in data and len(data) <= LINE_BYTES:
        select.select([fd], [], [])  # stdin may be non-blocking
        try:
            chunk = os.read(fd, LINE_BYTES)
        except BlockingIOError:
            continue
        if not chunk:
            break
        data += chunk
    return data


def _initialize(line: bytes) -> tuple[Any, dict, dict] | None:
    """The id, the params and the result of an `initialize` request (None: the line is
    not one, or not one that can be answered)."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    request_id, params = message.get("id"), message.get("params")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    if message.get("method") != "initialize" or not isinstance(params, dict):
        return None
    try:
        return request_id, params, initialize_result(params)
    except InitializeParamsError:
        return None


def _write(fd: int, data: bytes) -> None:
    while data:
        try:
            data = data[os.write(fd, data) :]
        except BlockingIOError:
            select.select([], [fd], [])


def answer_initialize(stdin: int = 0, stdout: int = 1) -> Early:
    """Answer the first request on `stdin` if it is `initialize` and `stdin` is a pipe or
    a socket; what was read, for the server to go on from."""
    mode = os.fstat(stdin).st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return Early(None, b"")
    data = _first_line(stdin)
    line, newline, rest = data.partition(b"\n")
    answer = _initialize(line) if newline else None
    if answer is None:
        return Early(None, data)
    request_id, params, result = answer
    try:
        _write(stdout, encode({"jsonrpc": "2.0", "id": request_id, "result": result}))
    except OSError:  # the client went away: the server sees its input end
        pass
    return Early(params, rest)
