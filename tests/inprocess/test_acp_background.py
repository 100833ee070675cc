"""Background tasks over ACP: the agent starts one and ends its turn, the editor's plan
shows it finish, a later turn gets its report; cancel and close stop it; what it would
ask about is refused inside it; after a restart it is reported lost."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

from acp import schema as S

from tests.support.waits import marked, marked_pids

BRIEF = "BG-1: look at a.py and write notes.txt"
MARK = f"deepacp-background-test-{uuid.uuid4().hex[:12]}"  # this process's, under xdist too
SLOW = marked("sleep 30", MARK)
"""A command the tests find among the processes (and see gone once it is stopped)."""


def call(name: str, call_id: str, **args) -> dict:
    return {"tool_calls": [{"id": call_id, "name": name, "args": args}]}


def child(turn: dict) -> dict:
    return {**turn, "when": "BG-1"}


START = [
    call(
        "start_background_task",
        "s1",
        description=BRIEF,
        subagent_type="general-purpose",
    ),
    {"content": "Started it; I will check later."},
]


def check(call_id: str = "k1") -> dict:
    return call("check_background_task", call_id, task_id="bg-s1")


async def until(condition: Callable[[], bool]) -> None:
    while not condition():
        await asyncio.sleep(0.05)


def plans(agent) -> list[list[str]]:
    return [[e.content for e in u.entries] for u in agent.client.of(S.AgentPlanUpdate)]


def slow_commands() -> list[int]:
    """The processes of `SLOW` running now."""
    return marked_pids(MARK)


async def set_mode(agent, session: str, mode: str) -> None:
    await agent.conn.set_session_mode(session_id=session, mode_id=mode)


async def test_a_task_finishes_while_idle_and_the_next_turn_gets_its_report(
    agent_factory, model_requests
) -> None:
    turns = [
        *START,
        child(call("read_file", "r1", file_path="a.py")),
        child(call("write_file", "w1", file_path="notes.txt", content="x is 1\n")),
        child({"content": "a.py sets x = 1; I wrote notes.txt."}),
        check(),
        check("k2"),
        {"content": "The task found x = 1."},
    ]
    async with agent_factory(turns) as agent:
        (agent.workspace / "a.py").write_text("x = 1\n")
        session = await agent.new_session()
        await set_mode(agent, session, "accept-edits")  # the task runs with the session's mode
        response = await agent.prompt(session, "look into a.py in the background")
        assert response.stop_reason == "end_turn"
        card = agent.client.cards()["s1"]
        assert card["title"] == f"Background: {BRIEF}"
        assert "Started background task bg-s1" in card["content"][-1].content.text
        await until(lambda: any(f"Background: {BRIEF} (finished)" in p for p in plans(agent)))
        assert [f"Background: {BRIEF} (running)"] in plans(agent)  # shown while it ran
        assert (agent.workspace / "notes.txt").read_text() == "x is 1\n"
        assert agent.client.permission_requests == []

        assert (await agent.prompt(session, "what did it find?")).stop_reason == "end_turn"
        report = agent.client.cards()["k1"]["content"][-1].content.text
        assert "Background task bg-s1 finished" in report
        assert "a.py sets x = 1; I wrote notes.txt." in report
        assert "Files it changed:\n- notes.txt" in report
        again = agent.client.cards()["k2"]["content"][-1].content.text
        assert again == "Background task bg-s1 finished; its report was given to the agent already."
        assert agent.client.text().endswith("The task found x = 1.")
        last = model_requests()[-1]["messages"]
        assert sum("a.py sets x = 1" in m["content"] for m in last) == 1  # given once


async def test_cancel_stops_the_task_and_its_command(agent_factory) -> None:
    turns = [
        *START,
        child(call("execute", "x1", command=SLOW)),
        child({"content": "never reached"}),
        call("cancel_background_task", "c1", task_id="bg-s1"),
        check(),
        {"content": "Cancelled it."},
    ]
    async with agent_factory(turns) as agent:
        session = await agent.new_session()
        await set_mode(agent, session, "yolo")
        await agent.prompt(session, "start it")
        await until(lambda: bool(slow_commands()))
        assert (await agent.prompt(session, "stop it")).stop_reason == "end_turn"
        cards = agent.client.cards()
        assert cards["c1"]["content"][-1].content.text == "Cancelled background task bg-s1."
        assert cards["k1"]["content"][-1].content.text == "Background task bg-s1 cancelled."
        assert plans(agent)[-1] == [f"Background: {BRIEF} (cancelled)"]
        await until(lambda: not slow_commands())


async def test_closing_the_session_stops_its_tasks(agent_factory) -> None:
    async with agent_factory([*START, child(call("execute", "x1", command=SLOW))]) as agent:
        session = await agent.new_session()
        await set_mode(agent, session, "yolo")
        await agent.prompt(session, "start it")
        await until(lambda: bool(slow_commands()))
        await agent.conn.close_session(session_id=session)
        await until(lambda: not slow_commands())
        await agent.conn.load_session(cwd=str(agent.workspace), session_id=session, mcp_servers=[])
        assert plans(agent)[-1] == [f"Background: {BRIEF} (lost)"]


async def test_what_a_task_would_ask_about_is_refused_and_nothing_is_asked(
    agent_factory, model_requests
) -> None:
    turns = [
        *START,
        child(call("edit_file", "e1", file_path="a.py", old_string="x = 1", new_string="x = 666")),
        child(call("execute", "x1", command="touch pwned")),
        child(call("ask_user", "q1", question="May I edit a.py?")),
        child({"content": "Both were refused."}),
        check(),
        {"content": "It could not do it in the background."},
    ]
    async with agent_factory(turns) as agent:
        (agent.workspace / "a.py").write_text("x = 1\n")
        session = await agent.new_session()  # ask mode
        await agent.prompt(session, "start it")
        await until(lambda: any(f"Background: {BRIEF} (finished)" in p for p in plans(agent)))
        await agent.prompt(session, "check it")
        assert agent.client.permission_requests == []
        assert (agent.workspace / "a.py").read_text() == "x = 1\n"
        assert not (agent.workspace / "pwned").exists()
        report = agent.client.cards()["k1"]["content"][-1].content.text
        assert "Both were refused." in report and "Files it changed" not in report
        child_requests = [r for r in model_requests() if r["messages"][0]["content"] == BRIEF]
        results = {m.get("tool_call_id"): m for m in child_requests[-1]["messages"]}
        for call_id in ("e1", "x1", "q1"):
            assert results[call_id]["status"] == "error"
            assert "background tasks cannot ask for approval" in results[call_id]["content"]


async def task_run_ended(server, task_id: str) -> bool:
    """Whether the server's run of background task `task_id` has ended."""
    from langgraph_sdk import get_client

    client = get_client(url=server.url, headers=server.headers)
    threads = await client.threads.search(metadata={"deepacp_task": task_id}, limit=1)
    if not threads:
        return False
    runs = await client.runs.list(threads[0]["thread_id"], limit=1)
    return bool(runs) and runs[0]["status"] not in ("pending", "running")
