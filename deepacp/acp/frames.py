"""The size limit of a frame, and what is owed for a frame over it.

A frame over `MAX_FRAME_BYTES` is skipped unread; only its head is kept. Clients write the
envelope's members before the large one (`{"jsonrpc":"2.0","id":7,"method":"session/prompt",
"params":{...}}`), so the head usually says whose it is: a request is answered with an error
under its own id (the editor's prompt fails at once instead of waiting forever), and a
response to one of our requests (a file the editor read for us) becomes an error for that
request. A head that says neither is answered with id null.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MAX_FRAME_BYTES = 16 * 1024 * 1024
"""16 MiB: a large pasted file (deepacp reads and writes files up to 10 MiB) or image
(providers take 5-20 MB) fits with room to spare; more is refused before it is parsed."""
HEAD_BYTES = 4096
"""What is kept of an oversized frame to find its id."""
SCALARS = (str, int, float, bool, type(None))
_decoder = json.JSONDecoder()


@dataclass(frozen=True)
class Oversized:
    """A frame over the limit: its size, and from its head the id and which way it goes."""

    size: int
    request_id: str | int | None = None
    answers_us: bool = False
    """It is a response to a request of ours (its large member is `result` or `error`)."""

    @classmethod
    def of(cls, head: bytes, size: int) -> Oversized:
        members, large = leading_members(head)
        request_id = members.get("id")
        if isinstance(request_id, bool) or not isinstance(request_id, str | int):
            return cls(size)
        if isinstance(members.get("method"), str):
            return cls(size, request_id)
        return cls(size, request_id, answers_us=large in ("result", "error"))

    @property
    def refusal(self) -> str:
        """The error message for the client's own request (or unreadable frame)."""
        return (
            f"Invalid Request: the message is {self._size}: send less at once "
            "(a smaller file or image)"
        )

    def as_response(self) -> dict[str, Any]:
        """What the request of ours it answers gets instead: an error."""
        error = {"code": -32600, "message": f"the client's answer is {self._size}"}
        return {"jsonrpc": "2.0", "id": self.request_id, "error": error}

    @property
    def _size(self) -> str:
        mib = self.size / (1 << 20)
        return f"{mib:.1f} MiB, over the {MAX_FRAME_BYTES >> 20} MiB a message may be"


def leading_members(head: bytes) -> tuple[dict[str, Any], str | None]:
    """The scalar members a JSON object's text starts with, and the name of the first one
    whose value is an object or an array (None: the head ended first, or is not an object)."""
    text = head.decode("utf-8", "ignore")
    members: dict[str, Any] = {}
    at = _skip(text, 0)
    if not text.startswith("{", at):
        return members, None
    at += 1
    try:
        while True:
            at = _skip(text, at)
            name, at = _decoder.raw_decode(text, at)
            at = _skip(text, at)
            if not isinstance(name, str) or not text.startswith(":", at):
                return members, None
            at = _skip(text, at + 1)
            if text.startswith(("{", "["), at):
                return members, name
            value, at = _decoder.raw_decode(text, at)
            at = _skip(text, at)
            if not isinstance(value, SCALARS) or not text.startswith(",", at):
                return members, None  # not a member we can be sure of (a number cut short)
            members[name] = value
            at += 1
    except ValueError:  # cut off mid-value, or not JSON
        return members, None


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at
