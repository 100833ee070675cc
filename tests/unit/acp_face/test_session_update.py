"""A `session/update` the handler sends is, byte for byte, what the SDK's
`SessionNotification` model would have written (and the ACP 1.25 fields its models lack)."""

from __future__ import annotations

import json
from typing import Any

from acp import schema as S
from acp.utils import serialize_params

from deepacp.acp import updates
from deepacp.acp.client import AcpSessionHandler
from deepacp.events import Command, CommandsChanged
from tests.support.events import SAMPLE_EVENTS as EVENTS


class Recorder:
    def __init__(self) -> None:
        self.sent: list[tuple[str, Any]] = []

    async def send_notification(self, method: str, params: Any) -> None:
        self.sent.append((method, params))


async def test_updates_are_written_as_the_sdk_model_writes_them() -> None:
    conn = Recorder()
    handler = AcpSessionHandler(conn, "s1", S.ClientCapabilities(), lambda: [])  # type: ignore[arg-type]
    commands = (Command("review", "Review the change", "what to review"),)
    for event in [*EVENTS, CommandsChanged(commands)]:
        await handler.emit(event)
    expected = [updates.to_update(e) for e in EVENTS] + [updates.commands_update(commands)]
    assert [m for m, _ in conn.sent] == ["session/update"] * len(expected)
    for (_, params), update in zip(conn.sent, expected, strict=True):
        model = S.SessionNotification(session_id="s1", update=update)
        if params["update"]["sessionUpdate"] == "tool_call":  # 1.25's ToolCall.name, beyond
            params["update"] = {**params["update"]}  # the SDK's model: written last
            assert params["update"].pop("name")
        assert json.dumps(params) == json.dumps(serialize_params(model))
