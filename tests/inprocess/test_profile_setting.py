"""The `profile` setting, in each place a user sets it: config.toml, `DEEPACP_PROFILE`,
`--profile`, and the session's `profile` config option. The compact profile leaves out the
plan tool, the sub-agents and the background tasks, and sends its short prompt; a profile
that does not exist is one error naming the ones that do."""

from __future__ import annotations

import pytest
from acp import RequestError

from deepacp.harness.profiles import COMPACT_PROMPT

LEFT_OUT = {"write_todos", "task", "start_background_task", "list_background_tasks", "glob"}


def compact(request: dict) -> bool:
    """Whether a recorded model request is the compact profile's."""
    return request["system"].startswith(COMPACT_PROMPT) and not LEFT_OUT & set(request["tools"])


def write_config(tmp_path, text: str) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700, exist_ok=True)
    (home / "config.toml").write_text(text)


@pytest.mark.parametrize("place", ["config", "env", "flag", "option"])
async def test_each_place_chooses_the_compact_profile(
    place, agent_factory, model_requests, tmp_path
):
    kwargs: dict = {}
    if place == "config":
        write_config(tmp_path, 'profile = "small-local"\n')
    elif place == "env":
        kwargs["env"] = {"DEEPACP_PROFILE": "small-local"}
    elif place == "flag":
        kwargs["args"] = ("--profile", "small-local")
    async with agent_factory([{"content": "a"}, {"content": "b"}], **kwargs) as agent:
        session = await agent.new_session()
        if place == "option":
            response = await agent.conn.set_config_option(
                config_id="profile", session_id=session, value="small-local"
            )
            (option,) = [o for o in response.config_options if o.id == "profile"]
            assert option.current_value == "small-local"
        assert (await agent.prompt(session, "hi")).stop_reason == "end_turn"
    (request,) = model_requests()
    assert compact(request), request["tools"]


async def test_the_option_switches_back_and_the_flag_beats_the_environment(
    agent_factory, model_requests
):
    env = {"DEEPACP_PROFILE": "small-local"}
    turns = [{"content": "a"}, {"content": "b"}]
    async with agent_factory(turns, env=env, args=("--profile", "default")) as agent:
        session = await agent.new_session()
        await agent.prompt(session, "one")
        await agent.conn.set_config_option(
            config_id="profile", session_id=session, value="small-local"
        )
        await agent.prompt(session, "two")
    full, small = model_requests()
    assert "write_todos" in full["tools"] and not compact(full)
    assert compact(small)


async def test_an_unknown_profile_is_one_error_naming_the_profiles(agent_factory, tmp_path):
    write_config(tmp_path, 'profile = "small_local"\n')
    async with agent_factory([{"content": "a"}]) as agent:
        with pytest.raises(RequestError) as info:
            await agent.new_session()
    message = str(info.value)
    assert "unknown profile 'small_local' (did you mean 'small-local'?)" in message
    assert "choose auto, default, small-local" in message

    write_config(tmp_path, "")
    async with agent_factory([{"content": "a"}], env={"DEEPACP_PROFILE": "tiny"}) as agent:
        with pytest.raises(RequestError) as info:
            await agent.new_session()
    assert "DEEPACP_PROFILE: unknown profile 'tiny'" in str(info.value)

    async with agent_factory([{"content": "a"}]) as agent:
        session = await agent.new_session()
        with pytest.raises(RequestError) as info:
            await agent.conn.set_config_option(
                config_id="profile", session_id=session, value="huge"
            )
        assert info.value.code == -32602 and "choose auto, default, small-local" in str(info.value)
        assert (await agent.prompt(session, "still here")).stop_reason == "end_turn"
