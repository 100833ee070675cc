"""Rewind over the wire: /undo and /rewind put files back byte for byte (edits, writes,
deletes and a command's changes), report files the user changed since, and shorten the
conversation that session/load replays."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp import schema as S
from acp.exceptions import RequestError

from tests.support.turns import edit

BEFORE = {
    "a.py": b"one = 1\r\ntwo = 2\r\n",
    "b.txt": "caf\u00e9 au lait\n".encode(),
    "gone.txt": b"delete me\n",
    "data.bin": b"\x00\x01\xfe\xff binary",
    ".gitignore": b"build/\n",
}
CHANGES = [
    {
        "tool_calls": [
            {
                "id": "e1",
                "name": "edit_file",
                "args": {"file_path": "a.py", "old_string": "one = 1", "new_string": "one = 11"},
            },
            {
                "id": "e2",
                "name": "edit_file",
                "args": {"file_path": "b.txt", "old_string": "lait", "new_string": "sucre"},
            },
            {"id": "w", "name": "write_file", "args": {"file_path": "new.txt", "content": "n\n"}},
            {"id": "d", "name": "delete", "args": {"file_path": "gone.txt"}},
            {
                "id": "x",
                "name": "execute",
                "args": {
                    "command": "printf more >> data.bin && mkdir -p src build"
                    " && echo made > src/made.txt && echo out > build/out.txt"
                },
            },
        ]
    },
    {"content": "changed everything"},
]


def files_of(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "build" not in p.parts
    }


async def changed_everything(agent, *earlier: str) -> str:
    """A session in yolo mode on the files of BEFORE: the `earlier` prompts, then the one
    whose turn makes CHANGES."""
    for name, data in BEFORE.items():
        (agent.workspace / name).write_bytes(data)
    session = await agent.new_session()
    await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
    for prompt in earlier:
        await agent.prompt(session, prompt)
    await agent.prompt(session, "change everything")
    return session


def last_text(agent, session: str) -> str:
    chunks = agent.client.of(S.AgentMessageChunk, session)
    return chunks[-1].content.text


async def test_undo_puts_every_file_back_and_load_replays_the_shorter_history(
    agent_factory, tmp_path
) -> None:
    home = tmp_path / "home"
    turns = [{"content": "hello"}, *CHANGES]
    async with agent_factory(turns, home=home) as agent:
        session = await changed_everything(agent, "say hello")
        changed = files_of(agent.workspace)
        assert changed["a.py"] == b"one = 11\r\ntwo = 2\r\n"
        assert "gone.txt" not in changed and changed["src/made.txt"] == b"made\n"
        assert changed["data.bin"] == BEFORE["data.bin"] + b"more"

        await agent.prompt(session, "/rewind")
        assert last_text(agent, session).endswith("1. say hello\n2. change everything")
        await agent.prompt(session, "/undo")
        assert "Rewound to before prompt 2" in last_text(agent, session)
        assert files_of(agent.workspace) == BEFORE  # created ones gone, deleted one back
        assert (agent.workspace / "build" / "out.txt").exists()  # ignored: not ours to undo
        await agent.prompt(session, "/rewind")
        assert last_text(agent, session).endswith("1. say hello")

    async with agent_factory([{"content": "again"}], home=home) as agent:
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=session, mcp_servers=[])
        users = [u.content.text for u in agent.client.of(S.UserMessageChunk)]
        assert users == ["say hello"]
        assert agent.client.text() == "hello"
        assert (await agent.prompt(session, "more")).stop_reason == "end_turn"
        assert (home / "rewind" / "sessions" / session).is_dir()
        assert await agent.raw_request("session/delete", {"sessionId": session}) == {}
        assert not (home / "rewind" / "sessions" / session).exists()


async def test_a_file_changed_since_is_reported_not_overwritten(agent_factory) -> None:
    async with agent_factory(CHANGES) as agent:
        session = await changed_everything(agent)
        mine = b"one = 'mine'\n"
        (agent.workspace / "a.py").write_bytes(mine)

        await agent.prompt(session, "/undo")
        said = last_text(agent, session)
        assert "Not rewound" in said and "a.py" in said and "--force" in said
        assert (agent.workspace / "a.py").read_bytes() == mine
        assert (agent.workspace / "new.txt").exists()  # nothing else was touched either

        await agent.prompt(session, "/rewind 1 --keep")
        assert "Kept your versions of: a.py" in last_text(agent, session)
        assert (agent.workspace / "a.py").read_bytes() == mine
        assert files_of(agent.workspace) == {**BEFORE, "a.py": mine}
        await agent.prompt(session, "/undo")
        assert last_text(agent, session) == "Nothing to undo yet."


async def test_force_restores_a_conflicting_file(agent_factory) -> None:
    async with agent_factory(CHANGES) as agent:
        session = await changed_everything(agent)
        (agent.workspace / "b.txt").write_bytes(b"mine\n")
        await agent.prompt(session, "/rewind 1 --force")
        assert files_of(agent.workspace) == BEFORE


async def test_files_come_back_through_the_editor(
    agent_factory, editor_client, capabilities
) -> None:
    turns = [edit("e", "a.py", "two", "three"), {"content": "edited"}]
    async with agent_factory(turns, client=editor_client, capabilities=capabilities()) as agent:
        path = agent.workspace / "a.py"
        path.write_text("one = 1\ntwo = 2\n")
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        await agent.prompt(session, "edit")
        assert editor_client.buffers[str(path)] == "one = 1\nthree = 2\n"
        await agent.prompt(session, "/undo")
        assert editor_client.writes[-1] == (str(path), "one = 1\ntwo = 2\n")  # the buffer too
        assert editor_client.buffers[str(path)] == path.read_text() == "one = 1\ntwo = 2\n"


def users(agent, session: str) -> list[str]:
    return [u.content.text for u in agent.client.of(S.UserMessageChunk, session)]


async def titles(agent) -> dict[str, str | None]:
    return {s.session_id: s.title for s in (await agent.conn.list_sessions()).sessions}


async def test_a_fork_lists_loads_the_shared_history_and_diverges(agent_factory, tmp_path) -> None:
    home = tmp_path / "home"
    turns = [{"content": "hello"}, {"content": "in the fork"}, {"content": "in the original"}]
    async with agent_factory(turns, home=home) as agent:
        assert agent.info.agent_capabilities.session_capabilities.fork is not None
        original = await agent.new_session()
        await agent.prompt(original, "say hello")
        forked = await agent.conn.fork_session(
            session_id=original, cwd=str(agent.workspace), mcp_servers=[]
        )
        fork = forked.session_id
        assert fork != original and forked.modes is not None
        assert (await titles(agent))[fork] == "fork of say hello after 1. say hello"
        await agent.prompt(fork, "go on in the fork")
        await agent.prompt(original, "go on in the original")

    async with agent_factory([], home=home) as agent:
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=fork, mcp_servers=[])
        assert users(agent, fork) == ["say hello", "go on in the fork"]
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=original, mcp_servers=[])
        assert users(agent, original) == ["say hello", "go on in the original"]
        await agent.prompt(fork, "/rewind")  # the fork has its own restore points
        assert last_text(agent, fork).endswith("1. say hello\n2. go on in the fork")

        assert await agent.raw_request("session/delete", {"sessionId": original}) == {}
        assert list(await titles(agent)) == [fork]
        await agent.prompt(fork, "/undo")
        assert "Rewound to before prompt 2" in last_text(agent, fork)


async def test_fork_command_and_the_turns_a_rewind_takes_back_are_kept(
    agent_factory, tmp_path
) -> None:
    home = tmp_path / "home"
    async with agent_factory([{"content": "one"}, {"content": "two"}], home=home) as agent:
        session = await agent.new_session()
        await agent.prompt(session, "first")
        await agent.prompt(session, "/fork")
        assert 'Forked into "fork of first after 1. first"' in last_text(agent, session)
        await agent.prompt(session, "second")
        await agent.prompt(session, "/undo")
        said = last_text(agent, session)
        assert 'taken back are kept in the session "fork of first after 2. second"' in said
        listed = await titles(agent)
        forks = ["fork of first after 1. first", "fork of first after 2. second"]
        assert sorted(listed.values()) == ["first", *forks]

    async with agent_factory([], home=home) as agent:
        replayed = []
        for other in (s for s in listed if s != session):
            await agent.conn.load_session(
                cwd=str(agent.workspace), session_id=other, mcp_servers=[]
            )
            replayed.append(users(agent, other))
        assert sorted(replayed) == [["first"], ["first", "second"]]
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=session, mcp_servers=[])
        assert users(agent, session) == ["first"]


async def test_rewind_alone_asks_which_prompt_and_a_conflict_asks_what_to_do(
    agent_factory,
) -> None:
    async with agent_factory([{"content": "hello"}, *CHANGES]) as agent:
        session = await changed_everything(agent, "say hello")
        mine = b"one = 'mine'\n"
        (agent.workspace / "a.py").write_bytes(mine)

        agent.client.answers = ["choice-0", "choice-0"]  # prompt 2 (newest first), "Keep mine"
        await agent.prompt(session, "/rewind")
        which, conflict = agent.client.permission_requests[-2:]
        assert [o.name for o in which.options] == [
            "2. change everything (the last prompt)",
            "1. say hello (and the 1 after it)",
        ]
        assert "a.py" in (conflict.tool_call.title or "")
        assert [o.name for o in conflict.options] == ["Keep mine", "Cancel", "Restore anyway"]
        said = last_text(agent, session)
        assert "Rewound to before prompt 2" in said and "Kept your versions of: a.py" in said
        assert files_of(agent.workspace) == {**BEFORE, "a.py": mine}

        agent.client.answers = [None]  # dismissed: nothing happens, the prompts are listed
        await agent.prompt(session, "/rewind")
        assert last_text(agent, session).endswith("1. say hello")


async def test_rewind_choices_go_through_elicitation_when_the_editor_offers_it(
    agent_factory, editor_client, capabilities
) -> None:
    script = [{"content": "hello"}, *CHANGES]
    async with agent_factory(
        script, client=editor_client, capabilities=capabilities(elicitation=True)
    ) as agent:
        session = await changed_everything(agent, "say hello")
        (agent.workspace / "b.txt").write_bytes(b"mine\n")
        editor_client.buffers[str(agent.workspace / "b.txt")] = "mine\n"  # edited in the editor
        editor_client.elicitation_answers = [
            "2. change everything (the last prompt)",
            "Restore anyway",
        ]
        await agent.prompt(session, "/rewind")
        assert len(editor_client.elicitations) == 2 and not editor_client.permission_requests
        said = last_text(agent, session)
        assert "Rewound to before prompt 2" in said and "b.txt" in said.split("Restored: ")[1]
        assert editor_client.buffers[str(agent.workspace / "b.txt")] == BEFORE["b.txt"].decode()


async def test_edit_prompt_and_rewind_as_protocol_methods(
    agent_factory, tmp_path, model_requests
) -> None:
    home = tmp_path / "home"
    turns = [{"content": "hello"}, *CHANGES, {"content": "changed nothing"}]
    async with agent_factory(turns, home=home) as agent:
        meta = agent.info.agent_capabilities.field_meta
        assert meta["deepacp"]["session"]["rewind"] == {"edit_prompt": True}
        for name, data in BEFORE.items():
            (agent.workspace / name).write_bytes(data)
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        first = (await agent.prompt(session, "say hello")).field_meta["deepacp"]["messageId"]
        second = (await agent.prompt(session, "change everything")).field_meta["deepacp"]
        (agent.workspace / "a.py").write_bytes(b"mine\n")

        edit = {"sessionId": session, "messageId": second["messageId"]}
        edit["content"] = [{"type": "text", "text": "change nothing"}]
        with pytest.raises(RequestError) as refused:
            await agent.raw_request("_session/edit_prompt", edit)
        assert refused.value.data == {"reason": "conflicts", "files": ["a.py"]}
        assert (agent.workspace / "new.txt").exists()  # nothing was done
        done = await agent.raw_request("_session/edit_prompt", {**edit, "onConflict": "restore"})
        assert done["stopReason"] == "end_turn"
        assert done["messageId"] not in (first, second["messageId"])
        assert "a.py" in done["_meta"]["deepacp"]["restored"]
        assert files_of(agent.workspace) == BEFORE
        sent = [m["content"] for m in model_requests()[-1]["messages"] if m["type"] == "human"]
        assert sent == ["say hello", "change nothing"]

        with pytest.raises(RequestError) as unknown:
            await agent.raw_request(
                "_session/rewind", {"sessionId": session, "toMessageId": second["messageId"]}
            )
        assert unknown.value.code == -32002 and unknown.value.data["reason"] == "unknown_message_id"
        rewound = await agent.raw_request(
            "_session/rewind", {"sessionId": session, "toMessageId": first}
        )
        assert rewound["lastMessageId"] == first

    async with agent_factory([], home=home) as agent:
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=session, mcp_servers=[])
        assert users(agent, session) == ["say hello"]
