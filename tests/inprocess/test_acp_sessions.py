"""Sessions: persistence across restarts, list/load/resume/close/delete, modes, models."""

from __future__ import annotations

import asyncio
import json

import pytest
from acp import RequestError
from acp import schema as S

TWO_TURNS = [
    {
        "reasoning": "first thoughts",
        "content": "I will write it.",
        "tool_calls": [
            {
                "id": "w1",
                "name": "write_file",
                "args": {"file_path": "hello.txt", "content": "hi\n"},
            }
        ],
    },
    {"content": "Wrote hello.txt."},
]


async def test_resume_close_delete_and_errors(agent_factory, tmp_path) -> None:
    async with agent_factory([{"content": "a"}, {"content": "b"}]) as agent:
        session = await agent.new_session()
        await agent.prompt(session, "first")
        before = len(agent.client.updates)
        await agent.conn.resume_session(
            cwd=str(agent.workspace), session_id=session, mcp_servers=[]
        )
        assert len(agent.client.updates) == before  # resume does not replay
        await agent.conn.close_session(session_id=session)
        assert (await agent.prompt(session, "reopened")).stop_reason == "end_turn"

        other = tmp_path / "elsewhere"
        other.mkdir()
        with pytest.raises(RequestError) as info:
            await agent.conn.load_session(cwd=str(other), session_id=session, mcp_servers=[])
        assert info.value.code == -32602 and "belongs to" in str(info.value)
        with pytest.raises(RequestError) as info:
            await agent.prompt("no-such-session", "hi")
        assert info.value.code == -32002
        with pytest.raises(RequestError) as info:
            await agent.conn.new_session(cwd="relative/path", mcp_servers=[])
        assert info.value.code == -32602

        assert await agent.raw_request("session/delete", {"sessionId": session}) == {}
        listed = await agent.conn.list_sessions()
        assert session not in [s.session_id for s in listed.sessions]
        # Deleting what is not there (again, or never was) succeeds silently, as the spec says.
        assert await agent.raw_request("session/delete", {"sessionId": session}) == {}
        assert await agent.raw_request("session/delete", {"sessionId": "never-was"}) == {}
        with pytest.raises(RequestError) as info:
            await agent.conn.load_session(
                cwd=str(agent.workspace), session_id=session, mcp_servers=[]
            )
        assert info.value.code == -32002
        with pytest.raises(RequestError) as info:
            await agent.raw_request(
                "session/fork", {"sessionId": session, "cwd": str(agent.workspace)}
            )
        assert info.value.code == -32002  # a deleted session cannot be forked
        assert await agent.raw_request("logout", {}) == {}  # nothing stored: nothing to forget


def commands_updates(agent, session: str, since: int = 0) -> list[int]:
    """Where in the wire the server sent `session` its command list, from `since` on."""
    return [
        i
        for i, m in enumerate(agent.wire.incoming)
        if i >= since
        and m.get("params", {}).get("sessionId") == session
        and m["params"].get("update", {}).get("sessionUpdate") == "available_commands_update"
    ]


def response_index(agent, key: str, since: int = 0) -> int:
    return next(
        i for i, m in enumerate(agent.wire.incoming) if i >= since and key in m.get("result", {})
    )


async def test_session_start_updates_come_once_and_before_a_load_response(
    agent_factory, tmp_path
) -> None:
    home = tmp_path / "home"
    turns = [{"content": "a"}, {"content": "b"}]
    async with agent_factory(turns, home=home) as agent:
        session = await agent.new_session()
        await agent.prompt(session, "one")  # by the end of a turn any repeat would be here
        [sent] = commands_updates(agent, session)
        assert sent > response_index(agent, "sessionId")  # after session/new's response
        mark = len(agent.wire.incoming)
        await agent.conn.resume_session(
            cwd=str(agent.workspace), session_id=session, mcp_servers=[]
        )
        await agent.prompt(session, "two")
        assert len(commands_updates(agent, session, mark)) == 1

    async with agent_factory([], home=home) as agent:  # a new server: the session is closed
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=session, mcp_servers=[])
        loaded = response_index(agent, "modes")
        [sent] = commands_updates(agent, session)
        assert sent < loaded  # ACP-LOAD-002: nothing after the load response
        await agent.prompt(session, "three")
        assert commands_updates(agent, session) == [sent]


async def test_a_reopened_session_offers_the_configured_model_too(agent_factory, tmp_path) -> None:
    home = tmp_path / "home"
    async with agent_factory([{"content": "from the first model"}], home=home) as agent:
        first = f"scripted:{agent.script}"
        session = await agent.new_session()
        await agent.prompt(session, "one")
    listed = tmp_path / "listed.json"
    listed.write_text('{"turns": []}')
    (home / "config.toml").write_text(f'models = ["scripted:{listed}"]\n')
    # The user has since changed DEEPACP_MODEL: the new default is offered with the old one.
    turns = [{"content": "from the new default"}]
    async with agent_factory(turns, home=home, script_name="second.json") as agent:
        default = f"scripted:{agent.script}"
        for method in (agent.conn.load_session, agent.conn.resume_session):
            response = await method(cwd=str(agent.workspace), session_id=session, mcp_servers=[])
            model = next(o for o in response.config_options if o.id == "model")
            assert model.current_value == first
            assert [o.value for o in model.options] == [first, default, f"scripted:{listed}"]
        await agent.conn.set_config_option(config_id="model", session_id=session, value=default)
        await agent.prompt(session, "two")
        assert agent.client.text(session).endswith("from the new default")


async def test_modes(agent_factory) -> None:
    def write(i: int) -> dict:
        args = {"file_path": f"f{i}.txt", "content": "x"}
        return {"tool_calls": [{"id": f"w{i}", "name": "write_file", "args": args}]}

    # A command that asks for more than the sandbox allows (or runs where there is none).
    escape = {"command": "echo ran", "outside_sandbox": True}
    run = {"tool_calls": [{"id": "x1", "name": "execute", "args": escape}]}
    turns = [
        write(1),
        {"content": "ok"},
        run,
        {"content": "ok"},
        write(2),
        {"content": "ok"},
        write(3),
        {"content": "ok"},
    ]
    async with agent_factory(turns) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="accept-edits")
        mode_updates = agent.client.of(S.CurrentModeUpdate)
        assert [u.current_mode_id for u in mode_updates] == ["accept-edits"]
        await agent.prompt(session, "edit")  # accepted without asking
        agent.client.answers = ["allow_once"]
        await agent.prompt(session, "run")  # a command outside the sandbox still asks
        assert [r.tool_call.tool_call_id for r in agent.client.permission_requests] == ["x1"]

        response = await agent.conn.set_config_option(
            config_id="mode", session_id=session, value="plan"
        )
        assert next(o for o in response.config_options if o.id == "mode").current_value == "plan"
        await agent.prompt(session, "try to write in plan mode")
        assert not (agent.workspace / "f2.txt").exists()
        assert agent.client.cards()["w2"]["statuses"][-1] == "failed"

        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        await agent.prompt(session, "write now")
        assert (agent.workspace / "f1.txt").exists() and (agent.workspace / "f3.txt").exists()
        assert len(agent.client.permission_requests) == 1
        with pytest.raises(RequestError) as info:
            await agent.conn.set_session_mode(session_id=session, mode_id="reckless")
        assert info.value.code == -32602


async def test_plan_mode_hides_mutating_tools_from_the_model(agent_factory, model_requests) -> None:
    async with agent_factory([{"content": "a"}, {"content": "b"}]) as agent:
        session = await agent.new_session()
        await agent.prompt(session, "ask mode")
        await agent.conn.set_session_mode(session_id=session, mode_id="plan")
        await agent.prompt(session, "plan mode")
        ask, plan = model_requests()
        assert {"write_file", "edit_file", "delete", "execute"} <= set(ask["tools"])
        assert not {"write_file", "edit_file", "delete", "execute"} & set(plan["tools"])
        assert "plan mode" in plan["system"]


async def test_model_switch_keeps_the_thread(
    agent_factory, tmp_path, model_requests, isolated_home
) -> None:
    other = tmp_path / "other.json"
    other.write_text(
        json.dumps(
            {
                "turns": [{"content": "from the other model"}],
                "record": str(tmp_path / "other.jsonl"),
            }
        )
    )
    async with agent_factory([{"content": "from the first model"}]) as agent:
        (agent.home).mkdir(exist_ok=True)
        (agent.home / "config.toml").write_text(f'models = ["scripted:{other}"]\n')
        session = await agent.new_session()
        await agent.prompt(session, "one")
        response = await agent.conn.set_config_option(
            config_id="model", session_id=session, value=f"scripted:{other}"
        )
        model = next(o for o in response.config_options if o.id == "model")
        assert model.current_value == f"scripted:{other}"
        assert f"scripted:{other}" in [o.value for o in model.options]
        await agent.prompt(session, "two")
        assert agent.client.text().endswith("from the other model")
        seen = [json.loads(line) for line in (tmp_path / "other.jsonl").read_text().splitlines()]
        assert [m["content"] for m in seen[0]["messages"] if m["type"] == "human"] == ["one", "two"]


async def test_sessions_are_isolated(agent_factory, tmp_path) -> None:
    write = {"name": "write_file", "args": {"file_path": "f.txt", "content": "mine"}}
    turns = [
        {"content": "writing", "delay_ms": 5, "tool_calls": [{"id": "w", **write}]},
        {"content": "ok"},
    ]
    async with agent_factory(turns) as agent:
        folders = [tmp_path / name for name in ("a", "b", "c")]
        for folder in folders:
            folder.mkdir()
        a, b, c = [await agent.new_session(folder) for folder in folders]
        await agent.conn.set_session_mode(session_id=b, mode_id="yolo")
        agent.client.answers = ["allow_always"]
        await asyncio.gather(agent.prompt(a, "in a"), agent.prompt(b, "in b"))
        # Only a asked (b is in yolo); each wrote in its own folder.
        assert [r.session_id for r in agent.client.permission_requests] == [a]
        assert all((folder / "f.txt").read_text() == "mine" for folder in folders[:2])
        # a's "always allow" does not carry over to c.
        agent.client.answers = ["reject_once"]
        await agent.prompt(c, "in c")
        assert [r.session_id for r in agent.client.permission_requests] == [a, c]
        assert not (folders[2] / "f.txt").exists()
        assert agent.client.text(a) == agent.client.text(b) == "writingok"
        listed = {s.session_id: s for s in (await agent.conn.list_sessions()).sessions}
        assert [listed[x].cwd for x in (a, b, c)] == [str(f) for f in folders]
        assert [
            s.session_id for s in (await agent.conn.list_sessions(cwd=str(folders[1]))).sessions
        ] == [b]
        state_a = await agent.conn.resume_session(cwd=str(folders[0]), session_id=a, mcp_servers=[])
        assert state_a.modes.current_mode_id == "ask"


@pytest.mark.parametrize(("finish", "stop"), [("length", "max_tokens"), ("refusal", "refusal")])
async def test_stop_reasons_from_the_model(agent_factory, finish: str, stop: str) -> None:
    async with agent_factory([{"content": "partial", "finish_reason": finish}]) as agent:
        session = await agent.new_session()
        assert (await agent.prompt(session, "go")).stop_reason == stop


async def test_provider_outage_is_retried_then_a_clear_error_and_the_session_survives(
    agent_factory, tmp_path
) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text("[retry]\nattempts = 2\ninitial_delay = 0.01\n")
    outage = {"error": "503 service unavailable"}
    turns = [outage, outage, {"content": "back again"}]
    async with agent_factory(turns, home=home) as agent:
        session = await agent.new_session()
        with pytest.raises(RequestError) as info:
            await agent.prompt(session, "hello")
        assert str(info.value) == (
            "Internal error: the model provider is still failing (ModelAPIError) after 2 "
            "tries; try again later"
        )
        assert "provider failing, retrying in 0.1 s, 2/2" in agent.client.text()
        assert (await agent.prompt(session, "retry")).stop_reason == "end_turn"
        assert agent.client.text().endswith("back again")


async def test_no_model_configured_is_a_readable_error(agent_factory) -> None:
    async with agent_factory([], env={"DEEPACP_MODEL": ""}) as agent:
        with pytest.raises(RequestError) as info:
            await agent.new_session()
        assert "no model configured" in str(info.value)


async def test_plan_tool_is_on_by_default_and_off_with_no_plan(
    agent_factory, model_requests
) -> None:
    async with agent_factory([{"content": "a"}]) as agent:
        await agent.prompt(await agent.new_session(), "hi")
    async with agent_factory([{"content": "b"}], args=("--no-plan",)) as agent:
        await agent.prompt(await agent.new_session(), "hi")
    with_plan, without = model_requests()
    assert "write_todos" in with_plan["tools"] and "write_todos" not in without["tools"]
