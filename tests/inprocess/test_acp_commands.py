"""Slash commands, plan / usage / title updates, ask_user, authentication."""

from __future__ import annotations

import pytest
from acp import RequestError
from acp import schema as S

from tests.support.turns import call, calls
from tests.support.waits import wait_for


async def test_commands_arrive_after_the_session_new_response(agent_factory) -> None:
    async with agent_factory([]) as agent:
        skill = agent.workspace / ".deepacp" / "skills" / "release-notes"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(
            "---\nname: release-notes\ndescription: Draft release notes.\n---\nsteps\n"
        )
        session = await agent.new_session()
        response_index = next(
            i
            for i, m in enumerate(agent.wire.incoming)
            if m.get("result", {}).get("sessionId") == session
        )
        await wait_for(lambda: agent.client.of(S.AvailableCommandsUpdate))
        first_update = next(
            i
            for i, m in enumerate(agent.wire.incoming)
            if m.get("params", {}).get("update", {}).get("sessionUpdate")
            == "available_commands_update"
        )
        assert first_update > response_index  # Zed drops updates sent before the response
        names = [c.name for c in agent.client.of(S.AvailableCommandsUpdate)[-1].available_commands]
        assert {
            "compact",
            "memory",
            "skills",
            "clear",
            "mode",
            "code-review",
            "release-notes",
        } <= set(names)
        mode = next(
            c
            for c in agent.client.of(S.AvailableCommandsUpdate)[-1].available_commands
            if c.name == "mode"
        )
        assert mode.input is not None

        # A skill added while the session is open refreshes the list.
        other = agent.workspace / ".deepacp" / "skills" / "triage"
        other.mkdir()
        (other / "SKILL.md").write_text(
            "---\nname: triage\ndescription: Triage an issue.\n---\nsteps\n"
        )
        await wait_for(
            lambda: (
                "triage"
                in [
                    c.name
                    for c in agent.client.of(S.AvailableCommandsUpdate)[-1].available_commands
                ]
            )
        )


async def test_compact_clear_and_a_skill_command(agent_factory, model_requests) -> None:
    turns = [
        {"content": "first answer " + "detail " * 50},
        {"content": "second answer"},
        {"content": "SUMMARY OF EARLIER WORK"},
        {"content": "after compact"},
        {"content": "reviewed"},
        {"content": "fresh start"},
    ]
    async with agent_factory(turns) as agent:
        session = await agent.new_session()
        await agent.prompt(session, "one " + "context " * 50)
        await agent.prompt(session, "two")
        response = await agent.prompt(session, "/compact")
        assert response.stop_reason == "end_turn"
        assert "Compacted" in agent.client.text()
        await agent.prompt(session, "three")
        seen = model_requests()
        assert seen[2]["messages"][0]["content"].startswith("Conversation to summarize")
        assert "SUMMARY OF EARLIER WORK" in seen[3]["messages"][0]["content"]

        await agent.prompt(session, "/code-review the parser change")
        skill_request = model_requests()[-1]["messages"][-1]["content"]
        assert (
            '<skill name="code-review"' in skill_request and "# Reviewing a change" in skill_request
        )
        assert skill_request.endswith("the parser change")

        await agent.prompt(session, "/clear")
        assert "fresh conversation" in agent.client.text()
        await agent.prompt(session, "hello again")
        assert [m["content"] for m in model_requests()[-1]["messages"]] == ["hello again"]


async def test_memory_skills_and_mode_commands(agent_factory) -> None:
    async with agent_factory([]) as agent:
        (agent.workspace / "AGENTS.md").write_text("notes\n")
        session = await agent.new_session()
        await agent.prompt(session, "/memory")
        assert "AGENTS.md" in agent.client.text() and "loaded" in agent.client.text()
        await agent.prompt(session, "/skills")
        assert "/code-review" in agent.client.text()
        await agent.prompt(session, "/mode plan")
        assert [u.current_mode_id for u in agent.client.of(S.CurrentModeUpdate)] == ["plan"]
        listed = await agent.conn.resume_session(
            cwd=str(agent.workspace), session_id=session, mcp_servers=[]
        )
        assert listed.modes.current_mode_id == "plan"
        await agent.prompt(session, "/etc/hosts looks wrong")  # not a command: a normal turn
        assert agent.client.text().endswith("(script exhausted)")


async def test_plan_usage_and_title_on_the_wire(agent_factory) -> None:
    todos = {
        "todos": [
            {"content": "Read the code", "status": "in_progress"},
            {"content": "Fix it", "status": "pending"},
        ]
    }
    turns = [
        {"tool_calls": [{"id": "p", "name": "write_todos", "args": todos}]},
        {"content": "planned"},
    ]
    async with agent_factory(turns) as agent:
        session = await agent.new_session()
        response = await agent.prompt(session, "Fix the flaky login test\nIt fails on CI")
        # The turn's tokens ride in _meta: `usage` is not in the stable schema.
        [raw] = [m["result"] for m in agent.wire.incoming if "stopReason" in m.get("result", {})]
        assert set(raw) == {"stopReason", "_meta"}
        usage = raw["_meta"]["deepacp"]["usage"]
        assert usage["inputTokens"] > 0 and usage["outputTokens"] > 0
        assert usage["totalTokens"] == usage["inputTokens"] + usage["outputTokens"]
        assert response.field_meta == raw["_meta"]
        [plan] = agent.client.of(S.AgentPlanUpdate)
        assert [(e.content, e.status) for e in plan.entries] == [
            ("Read the code", "in_progress"),
            ("Fix it", "pending"),
        ]
        usages = agent.client.of(S.UsageUpdate)
        assert len(usages) == 2 and all(u.used > 0 and u.size > 0 for u in usages)
        [title] = agent.client.of(S.SessionInfoUpdate)
        assert title.title == "Fix the flaky login test"
        listed = (await agent.conn.list_sessions()).sessions
        assert listed[0].title == "Fix the flaky login test"


ASK = [
    {
        "tool_calls": [
            {
                "id": "q",
                "name": "ask_user",
                "args": {"question": "Which database?", "choices": ["sqlite", "postgres"]},
            }
        ]
    },
    {"content": "Going with it."},
]


async def test_ask_user_through_elicitation(
    agent_factory, editor_client, capabilities, model_requests
) -> None:
    editor_client.elicitation_answers = ["postgres"]
    caps = capabilities(read=False, write=False, terminal=False, elicitation=True)
    async with agent_factory(ASK, client=editor_client, capabilities=caps) as agent:
        session = await agent.new_session()
        assert (await agent.prompt(session, "set it up")).stop_reason == "end_turn"
        [(message, mode)] = editor_client.elicitations
        assert message == "Which database?"
        assert mode.requested_schema.properties["answer"].enum == ["sqlite", "postgres"]
        answer = next(m for m in model_requests()[1]["messages"] if m.get("tool_call_id") == "q")
        assert answer["content"] == "postgres"


async def test_ask_user_through_a_permission_request(agent_factory, model_requests) -> None:
    async with agent_factory(ASK) as agent:
        session = await agent.new_session()
        agent.client.answers = ["choice-1"]
        assert (await agent.prompt(session, "set it up")).stop_reason == "end_turn"
        [request] = agent.client.permission_requests
        assert request.tool_call.tool_call_id == "q"
        assert [o.name for o in request.options] == ["sqlite", "postgres"]
        answer = next(m for m in model_requests()[1]["messages"] if m.get("tool_call_id") == "q")
        assert answer["content"] == "postgres"


async def test_ask_user_as_a_message_that_ends_the_turn(agent_factory, model_requests) -> None:
    open_question = [
        calls(call("q", "ask_user", question="What should the new CLI flag be called?")),
        {"content": "Using --verbose."},
    ]
    async with agent_factory(open_question) as agent:
        session = await agent.new_session()
        assert (await agent.prompt(session, "add a flag")).stop_reason == "end_turn"
        assert agent.client.text().endswith("What should the new CLI flag be called?")
        assert agent.client.cards()["q"]["statuses"][-1] == "completed"
        assert len(model_requests()) == 1  # the turn ended with the question
        await agent.prompt(session, "call it --verbose")
        messages = model_requests()[-1]["messages"]
        assert [m["type"] for m in messages] == ["human", "ai", "tool", "human"]
        assert "next message" in messages[2]["content"]


async def test_authenticate_checks_the_configured_model(agent_factory, tmp_path) -> None:
    async with agent_factory([]) as agent:
        assert await agent.conn.authenticate(method_id="model-api-key") is not None
        with pytest.raises(RequestError):
            await agent.conn.authenticate(method_id="password")
    async with agent_factory(
        [], env={"DEEPACP_MODEL": "openai:gpt-5.1", "OPENAI_API_KEY": ""}
    ) as agent:
        with pytest.raises(RequestError) as info:
            await agent.conn.authenticate(method_id="model-api-key")
        assert info.value.code == -32000
        assert "openai" in str(info.value)  # which extra to install, or which key to set
