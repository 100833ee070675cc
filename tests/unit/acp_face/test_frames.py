"""What an oversized frame's head says about it: whose it is, and which way it goes."""

from __future__ import annotations

import pytest

from deepacp.acp.frames import MAX_FRAME_BYTES, Oversized, leading_members

OVER = MAX_FRAME_BYTES + 1


@pytest.mark.parametrize(
    ("head", "members", "large"),
    [
        (b'{"id":7,"method":"m","params":{"a":', {"id": 7, "method": "m"}, "params"),
        (b' { "id" : "x" ,\n "result" : [1, 2', {"id": "x"}, "result"),
        (b'{"jsonrpc":"2.0","id":12', {"jsonrpc": "2.0"}, None),  # the id may be cut short
        (b'{"params":{"a":1},"id":3', {}, "params"),
        (b'{"id":"unterminated', {}, None),
        (b"[1, 2, 3", {}, None),
        (b"\xff\xfe not json", {}, None),
    ],
)
def test_leading_members(head: bytes, members: dict, large: str | None) -> None:
    assert leading_members(head) == (members, large)


def test_a_request_is_refused_under_its_id_with_the_limit() -> None:
    frame = Oversized.of(b'{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{', OVER)
    assert (frame.request_id, frame.answers_us) == (5, False)
    assert f"over the {MAX_FRAME_BYTES >> 20} MiB a message may be" in frame.refusal


def test_an_answer_to_our_request_becomes_its_error() -> None:
    frame = Oversized.of(b'{"jsonrpc":"2.0","id":0,"result":{"content":"aaaa', 17 << 20)
    assert frame.answers_us
    response = frame.as_response()
    assert response["id"] == 0 and response["error"]["code"] == -32600
    assert "the client's answer is 17.0 MiB" in response["error"]["message"]


@pytest.mark.parametrize(
    "head",
    [b'{"jsonrpc":"2.0","id":true,"method":"m","params":{', b'{"method":"m","params":{', b"x"],
)
def test_no_usable_id_is_answered_with_null(head: bytes) -> None:
    frame = Oversized.of(head, OVER)
    assert frame.request_id is None and not frame.answers_us
