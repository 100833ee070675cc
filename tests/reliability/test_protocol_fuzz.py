"""Malformed protocol input: a seeded storm of hostile frames at both servers' stdio.

`deepacp --stdio` gets invalid JSON and UTF-8, JSON that is not an object, broken envelopes,
wrong-typed params, unknown methods, requests for unknown sessions, out-of-order messages,
huge strings, deep nesting, frames of several MB and one over the transport's frame limit.
Every request must get exactly one JSON-RPC answer carrying its id (id null when the id
cannot be read), the process must stay up with bounded memory, and a session created before
the storm must still run a turn after it. `deepacp lsp` gets a smaller storm of well-framed
hostile bodies and must answer every request and still shut down cleanly.

The seed is printed and named in every failure; `DEEPACP_FUZZ_SEED=N` replays a storm. CI
uses a fixed seed (a red build must be reproducible); full runs draw a new one each time.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import string
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from deepacp.acp.transport import MAX_FRAME_BYTES
from tests.support.acp import DEEPACP
from tests.support.lsp import lsp_frame
from tests.support.reliability import FULL, Tally, size

pytestmark = pytest.mark.e2e

SEED = int(os.environ.get("DEEPACP_FUZZ_SEED") or (random.randrange(2**32) if FULL else 2026))
RESPONSE_TIMEOUT = 10.0
# Each server starts at roughly 100-250 MB. The storm's largest frames (one over the 16 MiB
# frame limit, a few of 4-5 MB) are buffered whole and then freed, and CPython's allocator
# keeps much of that freed memory mapped, so a leak-free server can end up ~100 MB larger.
# 200 MB leaves room for that and still fails a server that keeps every frame it was sent
# (the full storm alone sends several hundred MB).
RSS_GROWTH_LIMIT_MB = 200
MB = 1 << 20


@dataclass
class Expect:
    """The answer one frame must get.

    `answer` is "error", "result", "any" or "none" (a notification or a response: no
    answer). `id` None means the server cannot read the id and answers with id null.
    """

    kind: str
    id: int | str | None = None
    answer: str = "error"
    code: int | None = None
    sent_at: float = 0.0


def dumps(message: Any) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def parses(body: bytes) -> bool:
    try:
        json.loads(body)
    except (ValueError, RecursionError):
        return False
    return True


def nest(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


class Storm:
    """Seeded hostile frames, each with the answer it must get; one subclass per server."""

    KINDS: ClassVar[dict[str, int]] = {}  # frame generator method -> weight

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.count = 0

    def frame(self) -> tuple[bytes, Expect]:
        kind = self.rng.choices(list(self.KINDS), weights=list(self.KINDS.values()))[0]
        return getattr(self, kind)()

    def next_id(self) -> int | str:
        self.count += 1
        return self.count if self.count % 2 else f"fuzz-{self.count}"

    def request(
        self, kind: str, method: str, params: Any, answer: str = "error", code: int | None = None
    ) -> tuple[bytes, Expect]:
        request_id = self.next_id()
        body = dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return body, Expect(kind, request_id, answer, code)

    def notification(self, kind: str, method: str, params: Any) -> tuple[bytes, Expect]:
        return dumps({"jsonrpc": "2.0", "method": method, "params": params}), Expect(
            kind, None, "none"
        )

    def token(self, length: int = 10) -> str:
        return "".join(self.rng.choices(string.ascii_letters + string.digits, k=length))

    def text(self) -> str:
        """Random text, lone surrogates included (JSON carries them as \\udXXX escapes)."""
        return "".join(
            chr(self.rng.randrange(0x20, 0x30000)) for _ in range(self.rng.randrange(1, 40))
        )

    def huge(self) -> str:
        return self.token(16) * (self.rng.randrange(100_000, 400_000) // 16)

    def unknown_method_name(self) -> str:
        prefix = self.rng.choice(
            ["fuzz/", "_", "$/", "session/", "textDocument/", "workspace/", ""]
        )
        return prefix + self.token()

    def garbage(self) -> bytes:
        """Text that is not JSON: truncated, mangled, random bytes, invalid UTF-8."""
        valid = dumps({"jsonrpc": "2.0", "id": 1, "method": "fuzz/x", "params": {"a": [1, "b"]}})
        choices = [
            valid[: self.rng.randrange(1, len(valid) - 1)],
            bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(1, 200))),
            valid.replace(b'"', b"'"),
            valid[:-1] + b",}",
            valid.replace(b"fuzz/x", b"\xff\xfe\xc3"),
            b"{" + self.token().encode() + b"}",
            b"9" * 5000,  # past CPython's limit on integer digits
            b"{}" * self.rng.randrange(2, 50),
        ]
        body = self.rng.choice(choices).replace(b"\n", b" ")
        return body if body.strip() and not parses(body) else self.garbage()


class AcpStorm(Storm):
    """Frames for `deepacp --stdio`; `session_id` is the live session they must not harm."""

    KINDS: ClassVar[dict[str, int]] = {
        "bad_json": 3,
        "deep": 1,
        "nested": 1,
        "not_object": 2,
        "bad_envelope": 3,
        "unknown_method": 3,
        "wrong_types": 3,
        "unknown_session": 3,
        "out_of_order": 2,
        "huge_string": 1,
    }
    BIG = ("big_request", "big_prompt", "big_bad_json", "big_deep", "over_limit")

    def __init__(self, rng: random.Random, session_id: str, workspace: Path) -> None:
        super().__init__(rng)
        self.session_id = session_id
        self.workspace = str(workspace)

    def frames(self, count: int) -> Iterator[tuple[bytes, Expect]]:
        """`count` random frames with the BIG ones at random places among them."""
        at = dict(zip(sorted(self.rng.sample(range(count), len(self.BIG))), self.BIG, strict=True))
        for n in range(count):
            if n in at:
                yield getattr(self, at[n])()
            yield self.frame()

    def bad_json(self) -> tuple[bytes, Expect]:
        return self.garbage(), Expect("bad json", None, "error", -32700)

    def deep(self) -> tuple[bytes, Expect]:
        """Valid JSON nested far past the parser's recursion limit: a parse error."""
        depth = self.rng.randrange(20_000, 200_000)
        body = self.rng.choice(
            [
                nest(depth),
                b"[" * depth,
                b'{"a":' * depth + b"1" + b"}" * depth,
                b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%s}}'
                % nest(depth),
            ]
        )
        return body, Expect("deep nesting", None, "error", -32700)

    def nested(self) -> tuple[bytes, Expect]:
        """Nesting the parser accepts, where a string or content blocks belong."""
        depth = self.rng.randrange(1, 400)
        method, params = self.rng.choice(
            [
                ("fuzz/nested", {"a": "@"}),
                ("session/new", {"cwd": "@", "mcpServers": []}),
                ("session/prompt", {"sessionId": self.session_id, "prompt": ["@"]}),
            ]
        )
        body, expect = self.request("nested", method, params)
        if method == "fuzz/nested":
            expect.code = -32601
        return body.replace(b'"@"', nest(depth)), expect

    def not_object(self) -> tuple[bytes, Expect]:
        # ACP has no batches: an array is one Invalid Request, like any other non-object.
        request = {"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {}}
        body = self.rng.choice(
            [
                b"null",
                b"true",
                b"42",
                b"-1.5e300",
                dumps(self.text()),
                b"[]",
                b"[1,2,3]",
                dumps([request, request]),
            ]
        )
        return body, Expect("not an object", None, "error", -32600)

    def bad_envelope(self) -> tuple[bytes, Expect]:
        """An object that is not a JSON-RPC 2.0 message; the id is echoed when readable."""
        request_id = self.next_id()
        message: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "session/list",
            "params": {},
        }
        problem = self.rng.randrange(7)
        if problem == 0:
            del message["jsonrpc"]
        elif problem == 1:
            message["jsonrpc"] = self.rng.choice(["1.0", 2.0, None, "2", ""])
        elif problem == 2:
            message["method"] = self.rng.choice([5, None, ["session/list"], {"name": "x"}])
        elif problem == 3:
            message["params"] = self.rng.choice(["x", 5, True])
        elif problem == 4:
            message = {"jsonrpc": "2.0", "id": request_id}  # neither method nor result
        elif problem == 5:
            message["id"] = request_id = self.rng.choice([1.5, True, [1], {"id": 1}])
        else:
            message = self.rng.choice([{}, {"jsonrpc": "2.0"}, {"jsonrpc": "2.0", "result": 1}])
            request_id = None
        readable = type(request_id) in (int, str)
        return dumps(message), Expect(
            "bad envelope", request_id if readable else None, "error", -32600
        )

    def unknown_method(self) -> tuple[bytes, Expect]:
        params = self.rng.choice([{}, [], None, {"x": self.text()}, [1, "two"]])
        if self.rng.random() < 0.2:
            return self.notification("unknown notification", self.unknown_method_name(), params)
        if self.rng.random() < 0.05:  # id null: a request whose answer must carry id null
            message = {"jsonrpc": "2.0", "id": None, "method": self.unknown_method_name()}
            return dumps(message), Expect("unknown method, id null", None, "error", -32601)
        return self.request("unknown method", self.unknown_method_name(), params, code=-32601)

    def wrong_types(self) -> tuple[bytes, Expect]:
        """Known methods with params of the wrong type or value; the live session is named
        only where the params are invalid, so it is never changed."""
        sid, ws = self.session_id, self.workspace
        text = [{"type": "text", "text": "hi"}]
        method, params = self.rng.choice(
            [
                ("initialize", {"protocolVersion": -5}),  # the SDK maps strings to 1
                ("initialize", {}),
                ("initialize", []),
                ("session/new", {"cwd": 42, "mcpServers": []}),
                ("session/new", {"cwd": "relative/dir", "mcpServers": []}),
                ("session/new", {"cwd": "/no/such/dir/" + self.token(), "mcpServers": []}),
                ("session/new", {"cwd": ws, "mcpServers": "none"}),
                ("session/new", [ws]),
                ("session/new", None),
                ("session/prompt", {"sessionId": sid, "prompt": "a string, not content blocks"}),
                ("session/prompt", {"sessionId": sid, "prompt": [{"type": "bogus"}]}),
                ("session/prompt", {"sessionId": sid, "prompt": [{"type": "text"}]}),
                ("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": 5}]}),
                ("session/prompt", {"sessionId": 7, "prompt": text}),
                ("session/prompt", {"prompt": text}),
                ("session/set_mode", {"sessionId": sid, "modeId": "no-such-mode"}),
                ("session/set_mode", {"sessionId": sid}),
                (
                    "session/set_config_option",
                    {"sessionId": sid, "configId": "bogus", "value": "x"},
                ),
                ("session/set_config_option", {"sessionId": sid, "configId": "mode", "value": "x"}),
                ("session/load", {"sessionId": sid, "cwd": 7, "mcpServers": []}),
                ("session/load", {"sessionId": sid, "cwd": "/", "mcpServers": []}),  # not its cwd
                ("session/list", {"cwd": 5}),
                ("authenticate", {"methodId": "no-such-method"}),
                ("session/delete", {"sessionId": 5}),
            ]
        )
        return self.request("wrong types", method, params)

    def unknown_session(self) -> tuple[bytes, Expect]:
        sid = self.rng.choice(
            [
                f"{self.rng.getrandbits(128):032x}",
                "",
                "../../../etc/passwd",
                "' OR 1=1 --",
                "\ud800",
                self.text(),
                self.token(50_000),
            ]
        )
        if self.rng.random() < 0.2:
            return self.notification(
                "cancel an unknown session", "session/cancel", {"sessionId": sid}
            )
        method, params = self.rng.choice(
            [
                ("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]}),
                ("session/load", {"sessionId": sid, "cwd": self.workspace, "mcpServers": []}),
                ("session/resume", {"sessionId": sid, "cwd": self.workspace}),
                ("session/set_mode", {"sessionId": sid, "modeId": "ask"}),
                (
                    "session/set_config_option",
                    {"sessionId": sid, "configId": "mode", "value": "ask"},
                ),
                ("session/close", {"sessionId": sid}),
                ("session/delete", {"sessionId": sid}),
            ]
        )
        # Deleting a session that is not there succeeds (the spec); the rest are errors.
        answer = "result" if method == "session/delete" else "error"
        return self.request("unknown session", method, params, answer)

    def out_of_order(self) -> tuple[bytes, Expect]:
        """Messages valid in themselves but out of place: a second initialize, answers to
        requests never made, agent-to-client methods sent to the agent."""
        choice = self.rng.randrange(9)
        if choice == 0:
            return self.request("initialize again", "initialize", {"protocolVersion": 1}, "result")
        if choice == 1:
            return self.request("session/list", "session/list", {}, "result")
        if choice == 2:
            answer = self.rng.choice(
                [{"result": {"x": 1}}, {"error": {"code": 1, "message": "no"}}]
            )
            message = {
                "jsonrpc": "2.0",
                "id": self.rng.choice([f"nobody-{self.token()}", 10**9]),
                **answer,
            }
            return dumps(message), Expect("answer nobody asked for", None, "none")
        if choice == 3:
            params = {"sessionId": self.session_id}
            return self.request(
                "session/cancel as a request", "session/cancel", params, code=-32601
            )
        if choice == 4:
            return self.notification(
                "cancel the idle session", "session/cancel", {"sessionId": self.session_id}
            )
        if choice == 5:
            update = {
                "sessionId": self.session_id,
                "update": {"sessionUpdate": "agent_message_chunk"},
            }
            return self.notification("session/update from the client", "session/update", update)
        if choice == 6:
            method = self.rng.choice(
                ["session/update", "fs/read_text_file", "session/request_permission"]
            )
            return self.request(
                "client method", method, {"sessionId": self.session_id}, code=-32601
            )
        if choice == 7:
            return self.notification(
                "initialize as a notification", "initialize", {"protocolVersion": 1}
            )
        return self.notification("cancel a request", "$/cancel_request", {"requestId": self.count})

    def huge_string(self) -> tuple[bytes, Expect]:
        blob = self.huge()
        choice = self.rng.randrange(6)
        if choice == 0:
            return self.request("huge params", "fuzz/huge", {"blob": blob}, code=-32601)
        if choice == 1:
            return self.request("huge method name", blob, {}, code=-32601)
        if choice == 2:
            params = {"sessionId": "no-such-session", "prompt": [{"type": "text", "text": blob}]}
            return self.request("huge prompt", "session/prompt", params)
        if choice == 3:
            params = {"sessionId": blob, "prompt": [{"type": "text", "text": "hi"}]}
            return self.request("huge session id", "session/prompt", params)
        if choice == 4:
            return self.request("huge cwd", "session/new", {"cwd": "/" + blob, "mcpServers": []})
        body = b'{"jsonrpc":"2.0","id":1,"method":"' + blob.encode()  # never closed
        return body, Expect("huge bad json", None, "error", -32700)

    def big_request(self) -> tuple[bytes, Expect]:
        blob = "x" * (4 * MB + MB // 2)
        return self.request("4.5 MB request", "fuzz/big", {"blob": blob}, code=-32601)

    def big_prompt(self) -> tuple[bytes, Expect]:
        params = {
            "sessionId": "no-such-session",
            "prompt": [{"type": "text", "text": "y" * 5 * MB}],
        }
        return self.request("5 MB prompt", "session/prompt", params)

    def big_bad_json(self) -> tuple[bytes, Expect]:
        return b'{"blob":"' + b"z" * 4 * MB, Expect("4 MB bad json", None, "error", -32700)

    def big_deep(self) -> tuple[bytes, Expect]:
        return b"[" * 4 * MB, Expect("4 MB deep nesting", None, "error", -32700)

    def over_limit(self) -> tuple[bytes, Expect]:
        # The transport skips a frame over MAX_FRAME_BYTES unread but for its head, where the
        # id is: the answer owed is an Invalid Request error under that id.
        text = "o" * (MAX_FRAME_BYTES + MB)
        params = {"sessionId": self.session_id, "prompt": [{"type": "text", "text": text}]}
        return self.request("over the frame limit", "session/prompt", params, code=-32600)


class LspStorm(Storm):
    """Well-framed hostile bodies for `deepacp lsp`. No document is ever opened, so no
    `deepacp.edit` can start a run."""

    KINDS: ClassVar[dict[str, int]] = {
        "bad_body": 3,
        "wrong_types": 3,
        "unknown_document": 2,
        "unknown_method": 3,
        "edit_arguments": 3,
        "other_commands": 2,
        "out_of_order": 1,
        "huge_string": 1,
    }
    DOCUMENT: ClassVar[dict] = {"uri": "file:///nowhere/never-opened.py"}
    RANGE: ClassVar[dict] = {
        "start": {"line": 0, "character": 0},
        "end": {"line": 3, "character": 0},
    }
    COMMANDS: ClassVar[list[str]] = [
        "deepacp.cancel",
        "deepacp.accepted",
        "deepacp.acceptedProposal",
        "deepacp.acceptHunk",
        "deepacp.acceptFile",
        "deepacp.acceptProposal",
        "deepacp.rejectHunk",
        "deepacp.rejectProposal",
        "deepacp.review",
        "deepacp.showDiff",
    ]

    def frames(self, count: int) -> Iterator[tuple[bytes, Expect]]:
        for _ in range(count):
            yield self.frame()

    def bad_body(self) -> tuple[bytes, Expect]:
        # Answered before pygls sees them (deepacp/lsp/framing.py): not JSON (-32700), or not
        # a JSON-RPC 2.0 object (-32600, under its id when it has one).
        params = {"textDocument": self.DOCUMENT, "position": {"line": 0, "character": 0}}
        request = {"id": self.next_id(), "method": "textDocument/hover", "params": params}
        if self.rng.random() < 2 / 7:  # an object with an id, but not JSON-RPC 2.0
            body = dumps(self.rng.choice([request, {**request, "jsonrpc": "1.0"}]))
            return body, Expect("bad body", request["id"], "error", -32600)
        body = self.rng.choice(
            [
                self.garbage(),
                nest(self.rng.randrange(20_000, 100_000)),
                b"null",
                b"[1,2]",
                dumps(self.text()),
            ]
        )
        return body, Expect("bad body", None, "error", -32600 if parses(body) else -32700)

    def wrong_types(self) -> tuple[bytes, Expect]:
        doc, position = self.DOCUMENT, {"line": 0, "character": 0}
        method, params = self.rng.choice(
            [
                ("textDocument/hover", {"textDocument": doc, "position": "top"}),
                (
                    "textDocument/hover",
                    {"textDocument": doc, "position": {"line": "abc", "character": 0}},
                ),
                ("textDocument/hover", {"textDocument": 5, "position": position}),
                ("textDocument/hover", [doc]),
                ("textDocument/hover", None),
                (
                    "textDocument/codeAction",
                    {"textDocument": doc, "range": 5, "context": {"diagnostics": []}},
                ),
                (
                    "textDocument/codeAction",
                    {"textDocument": doc, "range": self.RANGE, "context": {"diagnostics": "none"}},
                ),
                ("textDocument/codeLens", {"textDocument": []}),
                ("workspace/executeCommand", {"arguments": []}),
                ("workspace/executeCommand", {"command": "deepacp.nonexistent", "arguments": []}),
                ("workspace/executeCommand", []),
            ]
        )
        return self.request("wrong types", method, params)

    def unknown_document(self) -> tuple[bytes, Expect]:
        """Valid requests about a document never opened: an empty result, not an error."""
        doc = {"uri": f"file:///nowhere/{self.token()}.py"}
        method, params = self.rng.choice(
            [
                (
                    "textDocument/hover",
                    {"textDocument": doc, "position": {"line": 3, "character": 1}},
                ),
                (
                    "textDocument/codeAction",
                    {"textDocument": doc, "range": self.RANGE, "context": {"diagnostics": []}},
                ),
                ("textDocument/codeLens", {"textDocument": doc}),
            ]
        )
        return self.request("unknown document", method, params, "result")

    def unknown_method(self) -> tuple[bytes, Expect]:
        params = self.rng.choice([{}, [], None, {"x": self.text()}])
        if self.rng.random() < 0.2:
            return self.notification("unknown notification", self.unknown_method_name(), params)
        return self.request("unknown method", self.unknown_method_name(), params, code=-32601)

    def edit_arguments(self) -> tuple[bytes, Expect]:
        # No all-string shapes: with a document known they would start a run (a bare
        # instruction), and cattrs turns many values into strings.
        arguments = self.rng.choice(
            [
                [],
                [None],
                [True],
                [1.5],
                [[1]],
                [{}],
                [{"uri": "file:///x"}],
                [{"instruction": "x"}],
                [{"uri": "file:///x", "instruction": "x", "range": "bad"}],
                [1, "a"],
                5,
                None,
            ]
        )
        params = {"command": "deepacp.edit", "arguments": arguments}
        return self.request("deepacp.edit arguments", "workspace/executeCommand", params)

    def other_commands(self) -> tuple[bytes, Expect]:
        """Review commands for proposals that do not exist: some answer a result, some an
        error, and none may go unanswered."""
        arguments = self.rng.choice([[], ["no-such-proposal"], [1, 2, 3], ["p", "u", "h"], [None]])
        params = {"command": self.rng.choice(self.COMMANDS), "arguments": arguments}
        return self.request("review command", "workspace/executeCommand", params, "any")

    def out_of_order(self) -> tuple[bytes, Expect]:
        if self.rng.random() < 0.5:
            message = {"jsonrpc": "2.0", "id": f"nobody-{self.token()}", "result": None}
            return dumps(message), Expect("answer nobody asked for", None, "none")
        return self.notification("cancel a request", "$/cancelRequest", {"id": self.count})

    def huge_string(self) -> tuple[bytes, Expect]:
        blob = self.huge()
        choice = self.rng.randrange(3)
        if choice == 0:
            return self.request("huge params", "fuzz/huge", {"blob": blob}, code=-32601)
        if choice == 1:
            params = {
                "textDocument": {"uri": "file:///" + blob},
                "position": {"line": 0, "character": 0},
            }
            return self.request("huge uri", "textDocument/hover", params, "result")
        params = {"command": "deepacp.edit", "arguments": [{"uri": "file:///" + blob}]}
        return self.request("huge edit arguments", "workspace/executeCommand", params)


class Replies:
    """What a server wrote: answers by id, answers with id null, notifications."""

    def __init__(self) -> None:
        self.by_id: dict[Any, list[tuple[dict, float]]] = defaultdict(list)
        self.null: list[dict] = []
        self.notifications: list[dict] = []

    def add(self, message: dict) -> None:
        if "method" in message:
            self.notifications.append(message)
        elif message.get("id") is None:
            self.null.append(message)
        else:
            self.by_id[message["id"]].append((message, asyncio.get_running_loop().time()))


async def read_lines(stdout: asyncio.StreamReader, replies: Replies) -> None:
    while line := await stdout.readline():
        replies.add(json.loads(line))


async def read_lsp(stdout: asyncio.StreamReader, replies: Replies) -> None:
    while True:
        length = 0
        while (line := await stdout.readline()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if not line:
            return
        replies.add(json.loads(await stdout.readexactly(length)))


def answer_problem(message: dict, expect: Expect) -> str | None:
    """Why `message` is not the answer `expect` asks for (None when it is)."""
    error = message.get("error")
    if message.get("jsonrpc") != "2.0":
        return f"not JSON-RPC 2.0: {str(message)[:200]}"
    if error is None and "result" in message:
        return (
            None
            if expect.answer in ("result", "any")
            else f"a result: {str(message['result'])[:200]}"
        )
    if (
        not isinstance(error, dict)
        or type(error.get("code")) is not int
        or not error.get("message")
    ):
        return f"not a JSON-RPC answer: {str(message)[:200]}"
    if expect.answer == "result":
        return f"an error: {str(error)[:200]}"
    if expect.code is not None and error["code"] != expect.code:
        return f"error {error['code']}, not {expect.code}: {error['message'][:200]}"
    return None


def check_answers(
    record: Callable[[bool, str], None], sent: list[Expect], replies: Replies, earlier: set
) -> None:
    """Record one attempt per request: exactly one right answer, in time. `earlier`: the
    ids of requests made before the storm."""
    for expect in sent:
        if expect.id is None:
            continue
        what = f"seed {SEED}: {expect.kind} (id {expect.id!r})"
        answers = replies.by_id.get(expect.id, [])
        if len(answers) != 1:
            record(False, f"{what}: {len(answers)} answers")
            continue
        message, arrived = answers[0]
        problem = answer_problem(message, expect)
        if problem is None and arrived - expect.sent_at > RESPONSE_TIMEOUT:
            problem = f"answered after {arrived - expect.sent_at:.1f} s"
        record(problem is None, f"{what}: {problem}")
    # Answers with id null cannot be told apart; their error codes must match as a multiset.
    missing = Counter(e.code for e in sent if e.id is None) - Counter(
        m.get("error", {}).get("code") for m in replies.null
    )
    for expect in sent:
        if expect.id is None:
            answered = missing[expect.code] == 0
            if not answered:
                missing[expect.code] -= 1
            record(answered, f"seed {SEED}: {expect.kind}: no error {expect.code} with id null")
    for message in replies.null:
        problem = answer_problem(message, Expect("id null"))
        if problem:
            record(False, f"seed {SEED}: answer with id null: {problem}")
    for request_id in replies.by_id.keys() - earlier - {e.id for e in sent}:
        record(False, f"seed {SEED}: an answer to id {request_id!r}, which was never sent")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for process {pid}")


async def wait_until(done: Callable[[], bool], timeout: float = RESPONSE_TIMEOUT) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not done() and loop.time() < deadline:
        await asyncio.sleep(0.02)
    return done()


async def send_storm(
    stdin: asyncio.StreamWriter,
    frames: Iterator[tuple[bytes, Expect]],
    frame: Callable[[bytes], bytes],
) -> tuple[list[Expect], int]:
    """Write every frame; the expectations of those owed an answer, and how many were sent."""
    loop = asyncio.get_running_loop()
    sent: list[Expect] = []
    count = 0
    for body, expect in frames:
        stdin.write(frame(body))
        try:
            await stdin.drain()
        except ConnectionError:  # the server is gone; the checks that follow say so
            break
        count += 1
        if expect.answer != "none":
            expect.sent_at = loop.time()
            sent.append(expect)
    return sent, count


def all_answered(sent: list[Expect], replies: Replies) -> Callable[[], bool]:
    nulls = sum(e.id is None for e in sent)
    return lambda: (
        len(replies.null) >= nulls and all(e.id in replies.by_id for e in sent if e.id is not None)
    )


async def weather(
    process: asyncio.subprocess.Process,
    reader: asyncio.Task,
    replies: Replies,
    frames: Iterator[tuple[bytes, Expect]],
    frame: Callable[[bytes], bytes],
    t: Tally,
) -> int:
    """Send the storm, record one attempt per answer owed, check the server is still up and
    its memory bounded; how many frames were written."""
    rss_before = rss_mb(process.pid)
    earlier = set(replies.by_id)
    sent, written = await send_storm(process.stdin, frames, frame)
    await wait_until(all_answered(sent, replies))
    check_answers(t.record, sent, replies, earlier)
    assert process.returncode is None and not reader.done(), "the server exited during the storm"
    rss_after = rss_mb(process.pid)
    t.figures.update(frames=written, rss_growth_mb=round(rss_after - rss_before))
    print(f"{written} frames, {len(sent)} answerable; RSS {rss_before:.0f} -> {rss_after:.0f} MB")
    assert rss_after - rss_before < RSS_GROWTH_LIMIT_MB
    return written


async def start(args: list[str], tmp_path: Path, turns: list[dict]) -> asyncio.subprocess.Process:
    workspace = tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns}))
    env = {
        "DEEPACP_HOME": str(tmp_path / "home"),
        "DEEPACP_MODEL": f"scripted:{script}",
        "PATH": os.environ.get("PATH", ""),
    }
    with (tmp_path / "stderr.log").open("wb") as stderr:
        return await asyncio.create_subprocess_exec(
            DEEPACP,
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=env,
            cwd=workspace,
            limit=2 * MAX_FRAME_BYTES,
        )


async def stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.kill()
    await process.wait()


@pytest.mark.slow(
    reason="600 malformed frames, five of them megabytes, to a deepacp server of its own"
)
async def test_acp_survives_a_storm_of_malformed_frames(tmp_path: Path, tally) -> None:
    t = tally("protocol fuzz: acp")
    print(f"seed {SEED}")
    turns = [{"content": "warmed up"}, {"content": "still here after the storm"}]
    process = await start(["--stdio"], tmp_path, turns)
    replies = Replies()
    reader = asyncio.create_task(read_lines(process.stdout, replies))

    async def call(request_id: str, method: str, params: dict, timeout: float = 60) -> dict:
        process.stdin.write(
            dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + b"\n"
        )
        await process.stdin.drain()
        assert await wait_until(lambda: request_id in replies.by_id, timeout), (
            f"no answer to {method}"
        )
        return replies.by_id[request_id][0][0]

    def said(session_id: str, since: int) -> str:
        return "".join(
            n["params"]["update"]["content"]["text"]
            for n in replies.notifications[since:]
            if n["method"] == "session/update"
            and n["params"]["sessionId"] == session_id
            and n["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        )

    try:
        assert "result" in await call("init", "initialize", {"protocolVersion": 1})
        new = await call(
            "new", "session/new", {"cwd": str(tmp_path / "workspace"), "mcpServers": []}
        )
        session_id = new["result"]["sessionId"]
        hello = [{"type": "text", "text": "hello"}]
        warm = await call("warm", "session/prompt", {"sessionId": session_id, "prompt": hello})
        assert warm["result"]["stopReason"] == "end_turn"
        assert said(session_id, 0) == "warmed up"
        storm = AcpStorm(random.Random(SEED), session_id, tmp_path / "workspace")
        count = size(600, 10_000)
        frames = storm.frames(count)
        written = await weather(process, reader, replies, frames, lambda body: body + b"\n", t)
        assert written == count + len(AcpStorm.BIG)

        since = len(replies.notifications)
        again = await call("after", "session/prompt", {"sessionId": session_id, "prompt": hello})
        assert again["result"]["stopReason"] == "end_turn"
        assert await wait_until(lambda: said(session_id, since) == "still here after the storm")
    finally:
        await stop(process)
        reader.cancel()
    t.check()


async def test_lsp_survives_a_storm_of_hostile_bodies(tmp_path: Path, tally) -> None:
    t = tally("protocol fuzz: lsp")
    print(f"seed {SEED}")
    process = await start(["lsp"], tmp_path, [])
    replies = Replies()
    reader = asyncio.create_task(read_lsp(process.stdout, replies))

    async def send(message: dict) -> None:
        process.stdin.write(lsp_frame(dumps({"jsonrpc": "2.0", **message})))
        await process.stdin.drain()

    async def call(request_id: str, method: str, params: Any) -> dict:
        await send({"id": request_id, "method": method, "params": params})
        assert await wait_until(lambda: request_id in replies.by_id, 60), f"no answer to {method}"
        return replies.by_id[request_id][0][0]

    try:
        root = (tmp_path / "workspace").as_uri()
        assert "result" in await call(
            "init", "initialize", {"processId": None, "rootUri": root, "capabilities": {}}
        )
        await send({"method": "initialized", "params": {}})
        storm = LspStorm(random.Random(SEED))
        count = size(150, 1000)
        written = await weather(process, reader, replies, storm.frames(count), lsp_frame, t)
        assert written == count

        cancel = await call(
            "cancel", "workspace/executeCommand", {"command": "deepacp.cancel", "arguments": []}
        )
        assert cancel["result"] == {"cancelled": 0}
        assert "error" not in await call("shutdown", "shutdown", None)
        await send({"method": "exit", "params": None})
        assert await asyncio.wait_for(process.wait(), RESPONSE_TIMEOUT) == 0
    finally:
        await stop(process)
        reader.cancel()
    t.check()
