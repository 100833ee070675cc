"""Sub-agents: quarantine, no recursion, parallelism, tombstones, strict arguments."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableLambda

from deepacp import create_deep_agent
from deepacp.harness.middleware.subagents import CompiledSubAgent, SubAgent, files_delta
from deepacp.testing import ScriptedChatModel
from tests.support.turns import call, calls, task


def results(state: dict) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}


async def test_child_sees_only_the_brief_and_parent_sees_only_the_report(tmp_path: Path) -> None:
    parent_log, child_log = tmp_path / "parent.jsonl", tmp_path / "child.jsonl"
    parent = ScriptedChatModel(
        record=str(parent_log),
        turns=[
            task("t1", "Count the files.", "counter"),
            {"content": "The child said there are 2."},
        ],
    )
    child = ScriptedChatModel(
        record=str(child_log),
        turns=[
            {"tool_calls": [{"id": "c1", "name": "ls", "args": {"path": ""}}]},
            {"content": "There are 2 files."},
        ],
    )
    counter = SubAgent("counter", "Counts files.", "You count files.", model=child)
    agent = create_deep_agent(parent, subagents=[counter])
    state = {
        "messages": [HumanMessage("secret parent context: the password is hunter2")],
        "files": {
            "a.txt": {"content": "a", "modified_at": "x"},
            "b.txt": {"content": "b", "modified_at": "x"},
        },
        "_private_note": "never to the child",
    }
    result = await agent.ainvoke(state)
    assert results(result)["t1"].content == "There are 2 files."
    first_child_request = json.loads(child_log.read_text().splitlines()[0])
    assert first_child_request["messages"] == [{"type": "human", "content": "Count the files."}]
    assert "hunter2" not in child_log.read_text()
    assert "task" not in first_child_request["tools"]  # no recursion
    assert "You count files." in first_child_request["system"]
    parent_requests = [json.loads(line) for line in parent_log.read_text().splitlines()]
    assert "task" in parent_requests[0]["tools"]
    seen = [m["content"] for m in parent_requests[1]["messages"] if m.get("tool_call_id") == "t1"]
    assert seen == ["There are 2 files."]  # not the child's ls call or its result


async def test_a_childs_deletion_reaches_the_parent() -> None:
    model = ScriptedChatModel(
        turns=[
            task("t", "tidy up"),
            calls(
                call("w", "write_file", file_path="new.md", content="n"),
                call("d", "delete", file_path="old.md"),
            ),
            {"content": "tidied"},
            {"content": "done"},
        ]
    )
    agent = create_deep_agent(model)
    files = {
        "old.md": {"content": "o", "modified_at": "x"},
        "keep.md": {"content": "k", "modified_at": "x"},
    }
    result = await agent.ainvoke({"messages": [HumanMessage("go")], "files": files})
    assert sorted(result["files"]) == ["keep.md", "new.md"]


def test_files_delta_has_tombstones() -> None:
    a = {"content": "a", "modified_at": "1"}
    b = {"content": "b", "modified_at": "2"}
    assert files_delta({"x": a, "y": a}, {"x": a, "z": b}) == {"z": b, "y": None}
    assert files_delta(None, None) == {}


async def test_parallel_tasks_run_concurrently() -> None:
    spans: list[tuple[float, float]] = []

    async def slow(state: dict) -> dict:
        start = time.monotonic()
        await asyncio.sleep(0.4)
        spans.append((start, time.monotonic()))
        return {"messages": [AIMessage(f"finished {state['messages'][0].content}")]}

    worker = CompiledSubAgent("worker", "Does slow work.", RunnableLambda(slow))
    calls = [
        {
            "id": f"t{i}",
            "name": "task",
            "args": {"description": f"job {i}", "subagent_type": "worker"},
        }
        for i in range(3)
    ]
    model = ScriptedChatModel(turns=[{"tool_calls": calls}, {"content": "all done"}])
    agent = create_deep_agent(model, subagents=[worker])
    result = await agent.ainvoke({"messages": [HumanMessage("go")]})
    # Overlapped: all started before any ended (a wall-clock bound would flake under load).
    assert max(s for s, _ in spans) < min(e for _, e in spans)
    assert {m.content for m in results(result).values()} == {f"finished job {i}" for i in range(3)}


async def test_task_arguments_are_strict(tmp_path: Path) -> None:
    model = ScriptedChatModel(
        turns=[
            {
                "tool_calls": [
                    {
                        "id": "bad",
                        "name": "task",
                        "args": {
                            "description": "x",
                            "subagent_type": "general-purpose",
                            "prompt": "the real instructions",
                        },
                    },
                    {
                        "id": "unknown",
                        "name": "task",
                        "args": {"description": "x", "subagent_type": "wizard"},
                    },
                ]
            },
            {"content": "ok"},
        ]
    )
    result = await create_deep_agent(model).ainvoke({"messages": [HumanMessage("go")]})
    bad, unknown = results(result)["bad"], results(result)["unknown"]
    assert bad.status == "error" and "prompt" in bad.content
    assert unknown.status == "error" and "general-purpose" in unknown.content
