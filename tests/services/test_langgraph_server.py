"""deepacp's harness on a real `langgraph dev`, driven through langgraph-sdk as any client of
the server would: the approval is an interrupt, resumed with the user's decision."""

from __future__ import annotations

from typing import Any

from langgraph_sdk import get_client

EDIT = {
    "tool_calls": [
        {
            "id": "e",
            "name": "edit_file",
            "args": {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"},
        }
    ]
}
STREAM = ["messages-tuple", "updates", "custom"]


async def run(client, thread_id: str, config: dict, **payload) -> list:
    return [
        part
        async for part in client.runs.stream(
            thread_id, "deepacp", config=config, stream_mode=STREAM, **payload
        )
    ]


async def make_x_two(server, mode: str) -> tuple[Any, dict, dict, list]:
    """With a.py holding `x = 1`, a run on a new thread in `mode` asks to make x two: the
    client, the thread, the run's config and what the run streamed."""
    (server.workspace / "a.py").write_text("x = 1\n")
    client = get_client(url=server.url, headers=server.headers)
    thread = await client.threads.create()
    config = {"configurable": {"workspace": str(server.workspace), "mode": mode}}
    message = {"type": "human", "content": "make x two"}
    parts = await run(client, thread["thread_id"], config, input={"messages": [message]})
    return client, thread, config, parts


async def test_an_edit_waits_for_approval_and_the_resumed_run_makes_it(langgraph_server) -> None:
    with langgraph_server([EDIT, {"content": "done"}]) as server:
        target = server.workspace / "a.py"
        client, thread, config, first = await make_x_two(server, "ask")
        [asked] = [
            p.data["__interrupt__"]
            for p in first
            if p.event == "updates" and "__interrupt__" in p.data
        ]
        assert asked[0]["value"]["name"] == "edit_file"
        assert target.read_text() == "x = 1\n"  # nothing changed before the yes

        resume = {asked[0]["id"]: {"type": "approve"}}
        second = await run(client, thread["thread_id"], config, command={"resume": resume})
        assert target.read_text() == "x = 2\n"
        results = [
            m
            for p in second
            if p.event == "updates" and "tools" in p.data
            for m in p.data["tools"]["messages"]
        ]
        assert results[0]["artifact"]["old_text"] == "x = 1\n"  # the card's whole-file diff
        assert results[0]["artifact"]["new_text"] == "x = 2\n"
        state = await client.threads.get_state(thread["thread_id"])
        assert state["values"]["messages"][-1]["content"] == "done"


async def test_plan_mode_from_the_run_config_keeps_the_file(langgraph_server) -> None:
    with langgraph_server([EDIT, {"content": "planned"}]) as server:
        target = server.workspace / "a.py"
        client, thread, _, parts = await make_x_two(server, "plan")
        assert not [p for p in parts if p.event == "updates" and "__interrupt__" in p.data]
        assert target.read_text() == "x = 1\n"
        state = await client.threads.get_state(thread["thread_id"])
        assert state["values"]["messages"][-1]["content"] == "planned"
