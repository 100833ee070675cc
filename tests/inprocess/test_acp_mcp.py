"""MCP servers passed by the client in session/new."""

from __future__ import annotations

import sys
from pathlib import Path

from acp import schema as S

SERVER = str(Path(__file__).parents[1] / "support" / "mcp_server.py")


def stdio(
    name: str, command: str = sys.executable, args: list[str] | None = None
) -> S.McpServerStdio:
    return S.McpServerStdio(
        name=name, command=command, args=[SERVER] if args is None else args, env=[]
    )


async def test_mcp_tools_run_over_one_held_connection(agent_factory, model_requests) -> None:
    calls = [
        {"tool_calls": [{"id": "p1", "name": "notes_whoami", "args": {}}]},
        {
            "tool_calls": [
                {"id": "p2", "name": "notes_whoami", "args": {}},
                {"id": "s", "name": "notes_add", "args": {"a": 2, "b": 3}},
            ]
        },
        {"tool_calls": [{"id": "w", "name": "notes_write_note", "args": {"text": "remember"}}]},
        {"content": "done"},
    ]
    async with agent_factory(calls) as agent:
        response = await agent.conn.new_session(
            cwd=str(agent.workspace), mcp_servers=[stdio("notes")]
        )
        session = response.session_id
        agent.client.answers = ["allow_once"]
        assert (await agent.prompt(session, "use the tools")).stop_reason == "end_turn"
        assert "notes_whoami" in model_requests()[0]["tools"]
        cards = agent.client.cards()
        first = cards["p1"]["content"][-1].content.text
        second = cards["p2"]["content"][-1].content.text
        assert first.isdigit() and first == second  # the same server process both times
        assert cards["s"]["content"][-1].content.text == "5"
        # Read-only tools ran without asking; the mutating one asked first.
        assert [r.tool_call.tool_call_id for r in agent.client.permission_requests] == ["w"]
        assert cards["w"]["content"][-1].content.text == "stored 1 notes"


async def test_a_broken_server_gives_a_notice_and_a_working_session(agent_factory) -> None:
    async with agent_factory([{"content": "still fine"}]) as agent:
        broken = stdio("ghost", command="/no/such/mcp-server", args=[])
        response = await agent.conn.new_session(
            cwd=str(agent.workspace), mcp_servers=[broken, stdio("notes")]
        )
        assert (await agent.prompt(response.session_id, "hello")).stop_reason == "end_turn"
        text = agent.client.text()
        assert "MCP server 'ghost' is not available" in text
        assert text.endswith("still fine")


async def test_closing_the_session_stops_its_servers(agent_factory) -> None:
    async with agent_factory(
        [{"tool_calls": [{"id": "p", "name": "notes_whoami", "args": {}}]}, {"content": "ok"}]
    ) as agent:
        response = await agent.conn.new_session(
            cwd=str(agent.workspace), mcp_servers=[stdio("notes")]
        )
        await agent.prompt(response.session_id, "who")
        pid = int(agent.client.cards()["p"]["content"][-1].content.text)
        await agent.conn.close_session(session_id=response.session_id)
        import asyncio
        import os

        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state == "Z":
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the MCP server is still running after close")
