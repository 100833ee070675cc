""" "Always" answers are remembered per workspace, for its later sessions, and /permissions
lists and forgets them; running outside the sandbox is never remembered."""

from __future__ import annotations

from acp import schema as S


def run(call_id: str, command: str, **extra) -> dict:
    args = {"command": command, **extra}
    return {"tool_calls": [{"id": call_id, "name": "execute", "args": args}]}


def last_text(agent, session: str) -> str:
    return agent.client.of(S.AgentMessageChunk, session)[-1].content.text


async def test_always_allow_outlives_the_session_until_forgotten(agent_factory) -> None:
    turns = [run("a1", "echo one"), {"content": "ok"}]  # each session's model starts here
    async with agent_factory(turns) as agent:
        first = await agent.new_session()
        agent.client.answers = ["allow_always"]
        await agent.prompt(first, "run it")
        await agent.conn.close_session(session_id=first)

        later = await agent.new_session()
        await agent.prompt(later, "run it again")
        assert [r.session_id for r in agent.client.permission_requests] == [first]
        await agent.prompt(later, "/permissions")
        assert last_text(agent, later).endswith("1. Always allow `echo one`")
        await agent.prompt(later, "/permissions forget 1")
        assert "Forgot: Always allow `echo one`" in last_text(agent, later)
        await agent.conn.close_session(session_id=later)

        third = await agent.new_session()
        agent.client.answers = ["reject_once"]
        await agent.prompt(third, "and again")
        asked = [r.session_id for r in agent.client.permission_requests]
        assert asked == [first, third]
        await agent.prompt(third, "/permissions")
        assert last_text(agent, third).startswith("Nothing answered")


async def test_running_outside_the_sandbox_is_never_remembered(agent_factory) -> None:
    turns = [run("x", "echo out", outside_sandbox=True), {"content": "ok"}]
    async with agent_factory(turns) as agent:
        first = await agent.new_session()
        options = []

        async def seen(request: S.RequestPermissionRequest) -> None:
            options.append([o.kind for o in request.options])

        agent.client.on_permission = seen
        agent.client.answers = ["allow_once"]
        await agent.prompt(first, "run it outside")
        await agent.prompt(first, "/permissions")
        assert last_text(agent, first).startswith("Nothing answered")
        assert options == [["allow_once", "reject_once"]]  # no "always" to remember
