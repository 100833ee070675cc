"""A `session/load` a fresh process answers from what the last load sent, before the SDK is
imported (deepacp/acp/quickload.py): the same messages as a load the usual way; an input
that changed since is corrected right after the response, or keeps the transcript from
being used at all; a session it may not open, or a damaged transcript, is loaded the usual
way. Each load here is sent once `initialize` is answered, as an editor restoring its last
session sends it (or a while after)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp import RequestError
from acp import schema as S

from tests.support.acp import RecordingClient
from tests.support.waits import wait_for

ONE_TURN = [{"content": "Hello there."}]
WITH_DIFF = [
    {
        "content": "Writing.",
        "tool_calls": [
            {"id": "w", "name": "write_file", "args": {"file_path": "a.py", "content": "x = 1\n"}}
        ],
    },
    {"content": "Wrote a.py."},
]


def transcript(home: Path, session: str) -> Path:
    return home / "cache" / "replays" / f"{session}.load.json"


def read_transcript(path: Path) -> tuple[str, dict]:
    """The key a transcript is kept under (its first line), and what it holds."""
    key, body = path.read_text().split("\n", 1)
    return json.loads(key), json.loads(body)


def answer_from_the_transcript(kept: dict) -> None:
    """Mark what a transcript holds: its answer reads "Hello from the transcript."."""
    for update in kept["updates"]:
        if update["sessionUpdate"] == "agent_message_chunk":
            update["content"]["text"] = "Hello from the transcript."


def skill(workspace: Path, name: str) -> None:
    folder = workspace / ".deepacp" / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Do {name}.\n---\nsteps\n")


async def closed_session(
    agent_factory, home: Path, turns: list[dict], env: dict | None = None
) -> str:
    """A session of one prompt, made and closed in a process of its own."""
    async with agent_factory(turns, home=home, env=env) as agent:
        session = await agent.new_session()
        await agent.prompt(session, "go")
    assert transcript(home, session).is_file()  # kept as the session closed
    return session


def after_response(agent) -> list[dict]:
    """The updates the server sent after its answer to the load (request 1)."""
    index = next(i for i, m in enumerate(agent.wire.incoming) if m.get("id") == 1)
    return [m["params"]["update"] for m in agent.wire.incoming[index + 1 :] if "method" in m]


def command_names(agent) -> set[str]:
    latest = agent.client.of(S.AvailableCommandsUpdate)[-1]
    return {c.name for c in latest.available_commands}


@pytest.fixture
async def said_hello(agent_factory, tmp_path: Path) -> tuple[Path, str]:
    """A home, and a session of ONE_TURN in it made and closed in a process of its own."""
    home = tmp_path / "home"
    return home, await closed_session(agent_factory, home, ONE_TURN)


async def test_a_quick_load_sends_what_a_load_from_the_checkpoints_sends(
    agent_factory, tmp_path
) -> None:
    home = tmp_path / "home"
    env = {"DEEPACP_EXAMPLE_TOKEN": "sk-never-written-down"}  # part of the key, as a hash
    session = await closed_session(agent_factory, home, WITH_DIFF, env)
    assert b"sk-never-written-down" not in transcript(home, session).read_bytes()
    async with agent_factory([], home=home, env=env, load=session) as agent:
        await asyncio.sleep(0.5)  # anything sent to correct it would have come by now
        quick = list(agent.wire.incoming)
    transcript(home, session).unlink()
    (home / "cache" / "replays" / f"{session}.json").unlink()
    async with agent_factory([], home=home, env=env, load=session) as agent:
        await asyncio.sleep(0.5)
        usual = list(agent.wire.incoming)
    assert quick == usual
    assert any(m.get("params", {}).get("update", {}).get("content") for m in quick)
    assert agent.client.text() == "Writing.Wrote a.py."


async def test_the_transcript_is_sent_and_a_stale_one_corrected_after_the_response(
    agent_factory, tmp_path, said_hello
) -> None:
    home, session = said_hello
    key, kept = read_transcript(transcript(home, session))
    answer_from_the_transcript(kept)  # what this process would not send: it came from the file
    real_mode = kept["result"]["modes"]["currentModeId"]
    other = next(m["id"] for m in kept["result"]["modes"]["availableModes"] if m["id"] != real_mode)
    kept["result"]["modes"]["currentModeId"] = other
    transcript(home, session).write_text(f"{json.dumps(key)}\n{json.dumps(kept)}")
    skill(tmp_path / "workspace", "triage")  # a new skill: not in the transcript's commands

    async with agent_factory([], home=home, load=session) as agent:
        assert agent.client.text() == "Hello from the transcript."
        await wait_for(lambda: "triage" in command_names(agent))
        await wait_for(lambda: agent.client.of(S.CurrentModeUpdate))
        assert agent.client.of(S.CurrentModeUpdate)[-1].current_mode_id == real_mode
        kinds = [u["sessionUpdate"] for u in after_response(agent)]
        assert {"available_commands_update", "current_mode_update"} <= set(kinds)

    async with agent_factory([], home=home, load=session) as agent:  # kept anew, and true
        assert agent.client.text() == "Hello there."
        assert "triage" in command_names(agent)
        await asyncio.sleep(0.5)
        assert after_response(agent) == []


async def test_a_changed_config_is_not_answered_from_the_transcript(
    agent_factory, said_hello
) -> None:
    home, session = said_hello
    (home / "config.toml").write_text('models = ["openai:gpt-5.1"]\n')
    client = RecordingClient()
    async with agent_factory([], home=home, client=client, load=session) as agent:
        response = next(m["result"] for m in agent.wire.incoming if m.get("id") == 1)
        model = next(o for o in response["configOptions"] if o["id"] == "model")
        assert "openai:gpt-5.1" in [choice["value"] for choice in model["options"]]
        await asyncio.sleep(0.5)
        assert after_response(agent) == []  # right the first time: nothing to correct


@pytest.mark.parametrize("wait", [0.2, 2.0], ids=["200 ms", "2 s"])
async def test_a_load_sent_a_while_after_initialize_is_answered_from_the_transcript(
    agent_factory, wait, said_hello
) -> None:
    """A client that loads its last session once `initialize` is answered, and not at
    once: the answer is still the transcript's (marked here), while the SDK imports or
    after."""
    home, session = said_hello
    key, kept = read_transcript(transcript(home, session))
    answer_from_the_transcript(kept)
    transcript(home, session).write_text(f"{json.dumps(key)}\n{json.dumps(kept)}")
    async with agent_factory([], home=home) as agent:
        await asyncio.sleep(wait)  # the client's pause, not a wait for the server
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=session, mcp_servers=[])
        assert agent.client.text() == "Hello from the transcript."


async def test_a_load_it_may_not_answer_is_refused_and_nothing_drawn(
    agent_factory, tmp_path, said_hello
) -> None:
    """Open in another process, from another folder, or of a forged id."""
    home, session = said_hello
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    async with agent_factory([], home=home, load=session) as holder:
        assert holder.client.text() == "Hello there."
        for load, workspace, refusal in [
            (session, None, "open in another deepacp process"),
            (session, elsewhere, "belongs to"),
            (f"../replays/{session}", None, "no session"),
        ]:
            client = RecordingClient()
            with pytest.raises(RequestError, match=refusal):
                async with agent_factory(
                    [], home=home, client=client, workspace=workspace, load=load
                ):
                    pass
            assert client.updates == []


async def test_a_prompt_right_behind_a_quick_load_runs_in_the_session(
    agent_factory, said_hello
) -> None:
    home, session = said_hello
    async with agent_factory([{"content": " And again."}], home=home, load=session) as agent:
        response = await agent.prompt(session, "more")
        assert response.stop_reason == "end_turn"
        assert agent.client.text() == "Hello there. And again."
    async with agent_factory([], home=home, load=session) as agent:
        assert agent.client.text() == "Hello there. And again."


async def test_a_damaged_transcript_is_loaded_the_usual_way(agent_factory, said_hello) -> None:
    """Each damage in turn, on one session: each load draws it whole, and keeps the
    transcript anew."""
    home, session = said_hello
    path = transcript(home, session)
    key, _ = read_transcript(path)
    for damaged in [
        "{not json",
        "[1, 2]",
        f'"{key}"\n{{"updates": {{"x": 1}}, "result": {{}}}}',  # updates not a list
        f'"{key}"\n{{"updates": []}}',  # no result
        f'"{key}"\n{{"updates": [{{"sessionUpd',  # cut short
    ]:
        path.write_text(damaged)
        async with agent_factory([], home=home, load=session) as agent:
            assert agent.client.text() == "Hello there.", damaged
            assert command_names(agent)
        assert read_transcript(path)[0] == key  # kept anew by that load
