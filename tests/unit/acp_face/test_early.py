"""`initialize` answered as the process starts (deepacp/acp/early.py): before asyncio and
the SDK load; what came with it, or anything that is not a well-formed `initialize`, left
whole for the server's handshake."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from deepacp.acp.capabilities import initialize_result
from deepacp.acp.early import LINE_BYTES, answer_initialize, encode

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}


def frame(message: dict) -> bytes:
    return json.dumps(message).encode() + b"\n"


def answered(*writes: bytes) -> tuple[dict | None, bytes, bytes]:
    """The params answered, what the server reads next (the bytes read and left to it,
    then the rest of its input) and what was written back, for a client that writes
    `writes` one by one."""
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()

    def client() -> None:
        for data in writes:
            os.write(stdin_w, data)
        os.close(stdin_w)

    writer = threading.Thread(target=client)
    writer.start()
    early = answer_initialize(stdin_r, stdout_w)
    os.close(stdout_w)
    with os.fdopen(stdin_r, "rb") as rest, os.fdopen(stdout_r, "rb") as out:
        unread = rest.read()
        writer.join()
        return early.params, early.rest + unread, out.read()


def test_initialize_is_answered_and_what_follows_it_kept() -> None:
    new = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {}}
    params, rest, out = answered(frame(INIT) + frame(new)[:10], frame(new)[10:])
    assert params == INIT["params"]
    assert rest == frame(new)  # the server reads it next, whole
    result = initialize_result(INIT["params"])
    assert out == encode({"jsonrpc": "2.0", "id": 0, "result": result})


def test_a_request_split_across_writes_is_answered() -> None:
    data = frame(INIT)
    params, rest, out = answered(data[:7], data[7:20], data[20:])
    assert params == INIT["params"] and rest == b""
    assert json.loads(out)["result"]["protocolVersion"] == 1


@pytest.mark.parametrize(
    "first",
    [
        frame({**INIT, "method": "session/new"}),
        frame({**INIT, "params": {"protocolVersion": "one"}}),
        frame({**INIT, "params": None}),
        frame({**INIT, "id": True}),
        frame({**INIT, "jsonrpc": "1.0"}),
        frame({k: v for k, v in INIT.items() if k != "id"}),
        b"not json\n",
        b"\n",
        frame(INIT)[:-1],  # two on one line
        b'{"jsonrpc": "2.0", "pad": "' + b"x" * LINE_BYTES + b'"}\n',
    ],
    ids=[
        "another method",
        "bad params",
        "no params",
        "boolean id",
        "wrong jsonrpc",
        "a notification",
        "not json",
        "blank line",
        "two on a line",
        "too long",
    ],
)
def test_anything_else_is_left_whole_to_the_handshake(first: bytes) -> None:
    params, rest, out = answered(first + frame(INIT))
    assert params is None and out == b""
    assert rest == first + frame(INIT)


def test_input_that_ends_inside_the_first_line_is_left_whole() -> None:
    params, rest, out = answered(frame(INIT)[:-1])
    assert (params, rest, out) == (None, frame(INIT)[:-1], b"")


def test_a_file_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "input"
    path.write_bytes(frame(INIT))
    with path.open("rb") as stdin:
        stdout_r, stdout_w = os.pipe()
        early = answer_initialize(stdin.fileno(), stdout_w)
        assert stdin.tell() == 0
    os.close(stdout_w)
    os.close(stdout_r)
    assert early.params is None and early.rest == b""
