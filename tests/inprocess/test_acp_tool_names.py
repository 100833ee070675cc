"""Every `tool_call` card names its tool (`ToolCall.name`, ACP 1.25), live and when the
session is loaded again; the wire check holds each card to the 1.25 schema."""

from __future__ import annotations

from tests.support import acp_schema

TURNS = [
    {
        "tool_calls": [
            {"id": "l", "name": "ls", "args": {}},
            {"id": "w", "name": "write_file", "args": {"file_path": "a.py", "content": "x = 1\n"}},
            {"id": "x", "name": "execute", "args": {"command": "true"}},
            {
                "id": "t",
                "name": "task",
                "args": {"description": "Say hi.", "subagent_type": "general-purpose"},
            },
        ]
    },
    {"content": "Hi."},  # the sub-agent
    {"content": "Done."},
]
NAMES = {"l": "ls", "w": "write_file", "x": "execute", "t": "task"}


def card_names(wire: list[dict]) -> dict[str, str | None]:
    """Each `tool_call` card's tool name, by call id (each card starts once)."""
    names: dict[str, str | None] = {}
    for message in wire:
        update = message.get("params", {}).get("update", {})
        if message.get("method") == "session/update" and update["sessionUpdate"] == "tool_call":
            assert update["toolCallId"] not in names
            names[update["toolCallId"]] = update.get("name")
            acp_schema.check(message)
    return names


async def test_every_card_names_its_tool_live_and_loaded(agent_factory, tmp_path) -> None:
    acp_schema.require()
    home = tmp_path / "home"
    async with agent_factory(TURNS, home=home) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        await agent.prompt(session, "go")
        assert card_names(agent.wire.incoming) == NAMES
    async with agent_factory([], home=home, load=session) as agent:
        assert card_names(agent.wire.incoming) == NAMES
