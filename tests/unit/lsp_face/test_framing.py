"""Frames on the way in to pygls: read leniently (a terminal's LF line ends), the ones that
hold no JSON-RPC message answered with an error and never handed on."""

from __future__ import annotations

import io
import json

from deepacp.lsp.framing import Frames
from tests.support.lsp import lsp_frame


def read_all(frames: Frames) -> list[dict]:
    """What pygls reads: header lines to a blank one, then the body of Content-Length."""
    messages = []
    while line := frames.readline():
        assert line.startswith(b"Content-Length: ") and line.endswith(b"\r\n")
        assert frames.readline() == b"\r\n"
        messages.append(json.loads(frames.read(int(line.split(b": ")[1]))))
    return messages


def answers(out: io.BytesIO) -> list[dict]:
    data, found = out.getvalue(), []
    while data:
        header, _, data = data.partition(b"\r\n\r\n")
        length = int(header.split(b": ")[1])
        found.append(json.loads(data[:length]))
        data = data[length:]
    return found


def test_good_frames_are_handed_on_and_bad_ones_answered() -> None:
    hover = {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {}}
    typed = b'{"jsonrpc": "2.0", "method": "initialized", "params": {}}'
    stream = io.BytesIO(
        lsp_frame(b"{not json")
        + lsp_frame(b"[1]")
        + lsp_frame(b'{"id": 5, "method": "x"}')
        + b"\r\n\n"  # blank lines between frames
        + b"content-length:%d\n\n" % len(typed)  # as typed on a terminal
        + typed
        + b"Content-Type: application/vscode-jsonrpc\r\n"
        + lsp_frame(json.dumps(hover).encode())
        + b"X-Other: 1\r\n\r\n"  # a header block without a length: skipped
        + b"Content-Length: 99\r\n\r\n{"  # input ends inside a body
    )
    out = io.BytesIO()
    assert read_all(Frames(stream, out)) == [json.loads(typed), hover]
    assert [(a["id"], a["error"]["code"]) for a in answers(out)] == [
        (None, -32700),
        (None, -32600),
        (5, -32600),
    ]
