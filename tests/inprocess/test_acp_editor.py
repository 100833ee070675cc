"""Working through the editor: its buffers, its file writes, its terminals — and the
fallbacks when a client offers none of them."""

from __future__ import annotations

import asyncio
import time

from acp import schema as S

from tests.support.turns import call, calls

EDIT = [
    {"tool_calls": [{"id": "r", "name": "read_file", "args": {"file_path": "app.py"}}]},
    {
        "tool_calls": [
            {
                "id": "e",
                "name": "edit_file",
                "args": {"file_path": "app.py", "old_string": "unsaved", "new_string": "edited"},
            }
        ]
    },
    {"content": "done"},
]


async def test_reads_see_the_buffer_and_writes_go_to_the_editor(
    agent_factory, editor_client, capabilities, model_requests
) -> None:
    async with agent_factory(EDIT, client=editor_client, capabilities=capabilities()) as agent:
        path = agent.workspace / "app.py"
        path.write_text("value = 'saved on disk'\n")
        editor_client.buffers[str(path)] = "value = 'unsaved in the editor'\n"
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        assert (await agent.prompt(session, "edit it")).stop_reason == "end_turn"
        read = next(m for m in model_requests()[1]["messages"] if m.get("tool_call_id") == "r")
        assert "unsaved in the editor" in read["content"]  # the model saw the buffer
        assert editor_client.writes == [(str(path), "value = 'edited in the editor'\n")]
        assert path.read_text() == "value = 'saved on disk'\n"  # nothing behind the editor's back
        diff = next(
            c
            for c in agent.client.cards()["e"]["content"]
            if isinstance(c, S.FileEditToolCallContent)
        )
        assert diff.old_text == "value = 'unsaved in the editor'\n"


async def test_commands_run_in_the_editors_terminal(
    agent_factory, editor_client, capabilities
) -> None:
    turns = [
        {
            "tool_calls": [
                {"id": "x", "name": "execute", "args": {"command": "echo from-terminal; exit 4"}}
            ]
        },
        {"content": "ran"},
    ]
    async with agent_factory(turns, client=editor_client, capabilities=capabilities()) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        await agent.prompt(session, "run")
        card = agent.client.cards()["x"]
        assert card["statuses"][-1] == "failed"  # exit code 4
        kinds = [type(c).__name__ for c in card["content"]]
        assert kinds[0] == "TerminalToolCallContent" and card["content"][0].terminal_id == "term-1"
        assert "from-terminal" in card["content"][-1].content.text
        assert "[exit code 4]" in card["content"][-1].content.text
        assert editor_client.released == ["term-1"]


async def test_cancel_kills_the_editor_terminal(agent_factory, editor_client, capabilities) -> None:
    turns = [
        {"tool_calls": [{"id": "s", "name": "execute", "args": {"command": "sleep 30"}}]},
        {"content": "x"},
    ]
    async with agent_factory(turns, client=editor_client, capabilities=capabilities()) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        task = asyncio.create_task(agent.prompt(session, "wait"))
        while not editor_client.terminals:
            await asyncio.sleep(0.01)
        started = time.monotonic()
        await agent.conn.cancel(session_id=session)
        assert (await task).stop_reason == "cancelled"
        assert time.monotonic() - started < 1.0
        process = editor_client.terminals["term-1"][0]
        await asyncio.wait_for(process.wait(), 2)
        assert editor_client.killed == ["term-1"] and editor_client.released == ["term-1"]


async def test_fallbacks_without_each_capability(
    agent_factory, editor_client, capabilities
) -> None:
    turns = [
        calls(
            call("r", "read_file", file_path="a.txt"),
            call("w", "write_file", file_path="b.txt", content="on disk\n"),
            call("x", "execute", command="echo local"),
        ),
        {"content": "ok"},
    ]
    none = capabilities(read=False, write=False, terminal=False)
    async with agent_factory(turns, client=editor_client, capabilities=none) as agent:
        (agent.workspace / "a.txt").write_text("disk text\n")
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        await agent.prompt(session, "go")
        assert (
            editor_client.reads == []
            and editor_client.writes == []
            and editor_client.terminals == {}
        )
        assert (agent.workspace / "b.txt").read_text() == "on disk\n"
        cards = agent.client.cards()
        assert "disk text" in cards["r"]["content"][-1].content.text
        assert "local" in cards["x"]["content"][-1].content.text


async def test_editor_errors_become_tool_errors_and_confinement_holds(
    agent_factory, editor_client, capabilities, tmp_path
) -> None:
    (tmp_path / "outside.txt").write_text("secret")

    async def refuse(*args, **kwargs):
        from acp import RequestError

        raise RequestError(-32603, "Internal error", {"details": "file is read-only in the editor"})

    editor_client.write_text_file = refuse  # type: ignore[method-assign]
    turns = [
        {
            "tool_calls": [
                {"id": "w", "name": "write_file", "args": {"file_path": "x.txt", "content": "x"}},
                {
                    "id": "o",
                    "name": "read_file",
                    "args": {"file_path": str(tmp_path / "outside.txt")},
                },
            ]
        },
        {"content": "ok"},
    ]
    async with agent_factory(turns, client=editor_client, capabilities=capabilities()) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        await agent.prompt(session, "go")
        cards = agent.client.cards()
        assert cards["w"]["statuses"][-1] == "failed"
        assert "read-only in the editor" in cards["w"]["content"][-1].content.text
        assert cards["o"]["statuses"][-1] == "failed"
        assert editor_client.reads == []  # the editor is never asked for a path outside


async def test_additional_directories_are_workspace_roots(
    agent_factory, tmp_path, model_requests
) -> None:
    extra = tmp_path / "shared-lib"
    extra.mkdir()
    (extra / "lib.py").write_text("def helper(): ...\n")
    turns = [
        {
            "tool_calls": [
                {"id": "r", "name": "read_file", "args": {"file_path": str(extra / "lib.py")}},
                {
                    "id": "w",
                    "name": "write_file",
                    "args": {"file_path": str(extra / "new.py"), "content": "x = 1\n"},
                },
                {
                    "id": "n",
                    "name": "read_file",
                    "args": {"file_path": str(tmp_path / "elsewhere.txt")},
                },
            ]
        },
        {"content": "ok"},
    ]
    (tmp_path / "elsewhere.txt").write_text("not a root")
    async with agent_factory(turns) as agent:
        response = await agent.conn.new_session(
            cwd=str(agent.workspace), mcp_servers=[], additional_directories=[str(extra)]
        )
        await agent.conn.set_session_mode(session_id=response.session_id, mode_id="yolo")
        await agent.prompt(response.session_id, "go")
        cards = agent.client.cards()
        assert (
            cards["r"]["statuses"][-1] == "completed"
            and "helper" in cards["r"]["content"][-1].content.text
        )
        assert (extra / "new.py").read_text() == "x = 1\n"
        assert cards["n"]["statuses"][-1] == "failed"
