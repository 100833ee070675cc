"""Background tasks: start answers at once, the report comes back once, updates reach the
running child, cancel stops it, a task this process never ran is lost, and approvals are
refused inside a task."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.memory import InMemorySaver

from deepacp import create_deep_agent
from deepacp.backends.filesystem import FilesystemBackend
from deepacp.backends.shell import LocalShellBackend
from deepacp.harness.background import InProcessTasks, merge_tasks
from deepacp.harness.middleware.background import task_id_for
from deepacp.harness.middleware.refuse_approvals import NO_APPROVAL
from deepacp.testing import ScriptedChatModel

BRIEF = "BRIEF-1: write done.txt"


def call(name: str, call_id: str, **args: Any) -> dict:
    return {"tool_calls": [{"id": call_id, "name": name, "args": args}]}


def start(call_id: str = "s1", brief: str = BRIEF) -> dict:
    return call(
        "start_background_task", call_id, description=brief, subagent_type="general-purpose"
    )


def results(state: dict) -> dict[str, str]:
    return {m.tool_call_id: m.text for m in state["messages"] if isinstance(m, ToolMessage)}


async def until(condition: Any) -> None:
    while not condition():
        await asyncio.sleep(0.02)


def agent_for(turns: list[dict], tmp_path: Path, runner: Any, **kwargs: Any) -> Any:
    model = ScriptedChatModel(turns=turns, record=str(tmp_path / "requests.jsonl"))
    (tmp_path / "ws").mkdir(exist_ok=True)
    backend = LocalShellBackend(tmp_path / "ws")
    return create_deep_agent(
        model, backend=backend, background=runner, checkpointer=InMemorySaver(), **kwargs
    )


def test_records_merge_by_id() -> None:
    left = {"a": {"id": "a", "status": "running", "description": "x"}}
    merged = merge_tasks(left, {"a": {"status": "finished"}, "b": {"id": "b"}})
    assert merged == {
        "a": {"id": "a", "status": "finished", "description": "x"},
        "b": {"id": "b"},
    }
    assert merge_tasks(None, None) == {}


def test_task_ids_are_short_and_unique() -> None:
    assert task_id_for("toolu_01ABCDEFGHxyz12345", {}) == "bg-xyz12345"
    assert task_id_for("s1", {"bg-s1": {}}) == "bg-s1-2"


async def test_start_answers_at_once_and_the_report_is_given_once(tmp_path: Path) -> None:
    ended: list[str] = []
    runner = InProcessTasks(on_end=lambda task_id: _append(ended, task_id))
    turns = [
        start(),
        {"content": "Started it."},
        call("write_file", "w1", file_path="done.txt", content="yes\n") | {"when": "BRIEF-1"},
        {"content": "Wrote done.txt.", "when": "BRIEF-1"},
        call("check_background_task", "k1", task_id="bg-s1"),
        call("check_background_task", "k2", task_id="bg-s1"),
        call("list_background_tasks", "l1"),
        {"content": "Done."},
    ]
    agent = agent_for(turns, tmp_path, runner)
    config = {"configurable": {"thread_id": "t"}}
    first = await agent.ainvoke({"messages": [HumanMessage("go")]}, config)
    assert "Started background task bg-s1" in results(first)["s1"]
    assert first["background_tasks"]["bg-s1"]["status"] == "running"
    await until(lambda: ended)
    assert ended == ["bg-s1"] and runner.status("bg-s1") == "finished"
    assert (tmp_path / "ws" / "done.txt").read_text() == "yes\n"
    second = await agent.ainvoke({"messages": [HumanMessage("check")]}, config)
    answers = results(second)
    assert "finished. Its report:\n\nWrote done.txt." in answers["k1"]
    assert "Files it changed:\n- done.txt" in answers["k1"]
    assert answers["k2"] == "Background task bg-s1 finished; its report was given to you already."
    assert answers["l1"].startswith("bg-s1: finished — BRIEF-1")
    assert second["background_tasks"]["bg-s1"] | {"description": ""} == {
        "id": "bg-s1",
        "description": "",
        "subagent_type": "general-purpose",
        "status": "finished",
        "delivered": True,
    }
    child = [json.loads(line) for line in (tmp_path / "requests.jsonl").read_text().splitlines()]
    brief = [r for r in child if r["messages"][0]["content"] == BRIEF]
    assert brief and "start_background_task" not in brief[0]["tools"]  # no recursion


async def _append(into: list[str], item: str) -> None:
    into.append(item)


async def test_an_update_reaches_the_running_child_and_cancel_stops_it(tmp_path: Path) -> None:
    runner = InProcessTasks()
    go, hold = asyncio.Event(), asyncio.Event()

    async def wait_for(signal: str) -> str:
        """Wait for the test's signal."""
        await (go if signal == "go" else hold).wait()
        return signal

    turns = [
        start(),
        {"content": "Started."},
        call("update_background_task", "u1", task_id="bg-s1", message="also PING"),
        {"content": "Sent."},
        call("wait_for", "g1", signal="go") | {"when": "BRIEF-1"},
        call("wait_for", "h1", signal="hold") | {"when": "BRIEF-1"},
        call("write_file", "w1", file_path="late.txt", content="no") | {"when": "BRIEF-1"},
        call("cancel_background_task", "c1", task_id="bg-s1"),
        call("check_background_task", "k1", task_id="bg-s1"),
        call("update_background_task", "u2", task_id="bg-s1", message="too late"),
        {"content": "Cancelled."},
    ]
    agent = agent_for(
        turns, tmp_path, runner, tools=[StructuredTool.from_function(coroutine=wait_for)]
    )
    config = {"configurable": {"thread_id": "t"}}
    await agent.ainvoke({"messages": [HumanMessage("go")]}, config)
    sent = await agent.ainvoke({"messages": [HumanMessage("tell it")]}, config)
    assert "Sent to background task bg-s1" in results(sent)["u1"]
    go.set()
    log = tmp_path / "requests.jsonl"
    await until(lambda: "also PING" in log.read_text())  # its next model call hears it
    last = await agent.ainvoke({"messages": [HumanMessage("stop it")]}, config)
    answers = results(last)
    assert answers["c1"] == "Cancelled background task bg-s1."
    assert answers["k1"] == "Background task bg-s1 cancelled."
    assert "is not running (cancelled)" in answers["u2"]
    assert runner.status("bg-s1") == "cancelled"
    hold.set()
    await asyncio.sleep(0)
    assert not (tmp_path / "ws" / "late.txt").exists()


async def test_a_task_this_process_never_ran_is_lost(tmp_path: Path) -> None:
    turns = [
        start(),
        {"content": "Started."},
        {"content": "child works", "delay_ms": 50, "when": "BRIEF-1"},
        call("check_background_task", "k1", task_id="bg-s1"),
        call("check_background_task", "k2", task_id="nope"),
        {"content": "Lost."},
    ]
    checkpointer = InMemorySaver()
    model = ScriptedChatModel(turns=turns)
    (tmp_path / "ws").mkdir()
    backend = FilesystemBackend(tmp_path / "ws")
    first_runner = InProcessTasks()
    before = create_deep_agent(
        model, backend=backend, background=first_runner, checkpointer=checkpointer
    )
    config = {"configurable": {"thread_id": "t"}}
    await before.ainvoke({"messages": [HumanMessage("go")]}, config)
    await first_runner.close()  # the process that ran it is gone
    after = create_deep_agent(
        model, backend=backend, background=InProcessTasks(), checkpointer=checkpointer
    )
    state = await after.ainvoke({"messages": [HumanMessage("check")]}, config)
    answers = results(state)
    assert answers["k1"].startswith("Background task bg-s1 is lost.")
    assert "start it again" in answers["k1"]
    assert "no background task 'nope'" in answers["k2"]
    assert state["background_tasks"]["bg-s1"]["status"] == "lost"


async def test_a_call_that_would_be_asked_about_is_refused_inside_the_task(
    tmp_path: Path,
) -> None:
    runner = InProcessTasks()
    turns = [
        start(),
        {"content": "Started."},
        call("edit_file", "e1", file_path="a.py", old_string="1", new_string="2")
        | {"when": "BRIEF-1"},
        call("execute", "x1", command="touch pwned") | {"when": "BRIEF-1"},
        call("ask_user", "q1", question="may I?") | {"when": "BRIEF-1"},
        {"content": "Nothing was allowed.", "when": "BRIEF-1"},
        call("check_background_task", "k1", task_id="bg-s1"),
        {"content": "ok"},
    ]
    from deepacp.session.turns.ask import ask_user_tool

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("x = 1\n")
    asked: list[str] = []

    def gate(request: Any) -> bool:
        asked.append(request.tool_call["name"])
        return True

    agent = agent_for(
        turns,
        tmp_path,
        runner,
        tools=[ask_user_tool()],
        interrupt_on={
            "edit_file": {"allowed_decisions": ["approve"], "when": gate},
            "execute": True,
        },
    )
    config = {"configurable": {"thread_id": "t"}}
    await agent.ainvoke({"messages": [HumanMessage("go")]}, config)
    await until(lambda: runner.status("bg-s1") != "running")
    state = await agent.ainvoke({"messages": [HumanMessage("check")]}, config)
    assert "Nothing was allowed." in results(state)["k1"]
    assert "Files it changed" not in results(state)["k1"]
    assert (ws / "a.py").read_text() == "x = 1\n" and not (ws / "pwned").exists()
    assert asked == ["edit_file"]
    requests = [json.loads(line) for line in (tmp_path / "requests.jsonl").read_text().splitlines()]
    child_last = [r for r in requests if r["messages"][0]["content"] == BRIEF][-1]
    refusals = {m["tool_call_id"]: m for m in child_last["messages"] if m.get("tool_call_id")}
    for call_id, name in (("e1", "edit_file"), ("x1", "execute"), ("q1", "ask_user")):
        assert refusals[call_id]["status"] == "error"
        assert refusals[call_id]["content"] == NO_APPROVAL.format(name=name)
    assert state.get("__interrupt__") is None  # nothing was put to the user


async def test_an_update_the_task_ended_before_reading_is_reported() -> None:
    class Child:
        """A sub-agent on its last model call when the update arrives."""

        def __init__(self) -> None:
            self.release = asyncio.Event()

        async def ainvoke(self, payload: dict, config: dict) -> dict:
            await self.release.wait()
            return {"messages": [AIMessage("Done, without it.")]}

    child, runner = Child(), InProcessTasks()
    await runner.start("bg-1", child, {"messages": []})
    assert await runner.send("bg-1", "also check b.py")
    child.release.set()
    await until(lambda: runner.status("bg-1") == "finished")
    report = (await runner.outcome("bg-1")).report
    assert (
        report == "Done, without it.\n\n(It ended before it read what you sent it: also check b.py)"
    )
    assert not await runner.send("bg-1", "too late")
