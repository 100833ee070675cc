"""Context controls: large-result offload, large-input eviction, the same-path guard,
dangling tool call repair, and middleware replacement by name."""

from __future__ import annotations

import json
from pathlib import Path

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from deepacp import create_deep_agent
from deepacp.backends import LocalShellBackend, StateBackend
from deepacp.harness.middleware.patch_tool_calls import repair_dangling_tool_calls
from deepacp.testing import ScriptedChatModel


async def test_large_result_is_offloaded_with_a_preview(run_calls, tmp_path: Path) -> None:
    lines = [f"line {i} " + "x" * 90 for i in range(1, 2001)]
    (tmp_path / "big.txt").write_text("\n".join(lines) + "\n")
    record = tmp_path.parent / "record.jsonl"
    model = ScriptedChatModel(
        record=str(record),
        turns=[
            {"tool_calls": [{"id": "big", "name": "execute", "args": {"command": "cat big.txt"}}]},
            {
                "tool_calls": [  # the name is ours, not the call's id: search the folder
                    {
                        "id": "page",
                        "name": "grep",
                        "args": {"pattern": "line 1001 ", "path": "/large_tool_results"},
                    }
                ]
            },
            {"content": "done"},
        ],
    )
    agent = create_deep_agent(model, backend=LocalShellBackend(tmp_path))
    result = await agent.ainvoke({"messages": [HumanMessage("show big.txt")]})
    results = {m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)}
    shown = results["big"].content
    assert len(shown) < 3000
    saved = shown.split("saved in full at ", 1)[1].split(".\n", 1)[0]
    assert saved.startswith("/large_tool_results/") and saved != "/large_tool_results/big"
    assert "line 1 " in shown and "line 2000 " in shown and "line 1000 " not in shown
    assert f'read_file(file_path="{saved}"' in shown
    # The full text is in the thread's files and can be found again.
    assert result["files"][saved]["content"].startswith("line 1 ")
    assert results["page"].content.startswith(f"{saved}:1001: line 1001 ")
    # What the model saw is the preview, not the whole output.
    requests = [json.loads(line) for line in record.read_text().splitlines()]
    seen = next(m for m in requests[1]["messages"] if m.get("tool_call_id") == "big")
    assert seen["content"] == shown
    # Nothing was written into the user's workspace.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt"]


async def test_self_limiting_tools_are_never_offloaded(run_calls, tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text(("y" * 1999 + "\n") * 100)
    result = await run_calls(
        LocalShellBackend(tmp_path), [{"name": "read_file", "args": {"file_path": "wide.txt"}}]
    )
    assert "large_tool_results" not in result["results"]["call_0"].content
    assert len(result["results"]["call_0"].content) > 100_000


async def test_large_user_message_is_shown_as_a_preview(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    model = ScriptedChatModel(record=str(record), turns=[{"content": "ok"}, {"content": "again"}])
    agent = create_deep_agent(model, checkpointer=InMemorySaver())
    huge = "\n".join(f"log line {i}" for i in range(40_000))
    config = {"configurable": {"thread_id": "t"}}
    result = await agent.ainvoke({"messages": [HumanMessage(huge, id="big-input")]}, config)
    assert result["messages"][0].content == huge  # state keeps it whole
    seen = json.loads(record.read_text().splitlines()[0])["messages"][0]["content"]
    assert len(seen) < 5000 and "/conversation_history/big-input.md" in seen
    assert result["files"]["/conversation_history/big-input.md"]["content"] == huge


async def test_second_change_to_the_same_file_in_one_turn_is_rejected(
    run_calls, tmp_path: Path
) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    result = await run_calls(
        LocalShellBackend(tmp_path),
        [
            {
                "name": "edit_file",
                "args": {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"},
            },
            {
                "name": "write_file",
                "args": {"file_path": str(tmp_path / "a.py"), "content": "x = 3\n"},
            },
            {"name": "write_file", "args": {"file_path": "b.py", "content": "y = 1\n"}},
        ],
    )
    first, second, other = (result["results"][f"call_{i}"] for i in range(3))
    assert first.status == "success" and other.status == "success"
    assert second.status == "error" and "already changes a.py" in second.content
    assert (tmp_path / "a.py").read_text() == "x = 2\n"


def test_repair_answers_dangling_calls_in_place() -> None:
    calls = [{"id": "a", "name": "ls", "args": {}}, {"id": "b", "name": "ls", "args": {}}]
    log = [
        HumanMessage("one", id="h1"),
        AIMessage("", tool_calls=calls, id="ai1"),
        ToolMessage("done", tool_call_id="a", id="t1"),
        HumanMessage("two", id="h2"),
    ]
    repaired = repair_dangling_tool_calls(log)
    assert [type(m).__name__ for m in repaired] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "ToolMessage",
        "HumanMessage",
    ]
    assert repaired[3].tool_call_id == "b" and repaired[3].status == "error"
    assert repair_dangling_tool_calls(repaired) is None


async def test_dangling_calls_are_answered_before_the_next_run() -> None:
    record_model = ScriptedChatModel(turns=[{"content": "fine"}])
    agent = create_deep_agent(record_model, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    dangling = AIMessage("", tool_calls=[{"id": "lost", "name": "ls", "args": {}}], id="ai")
    await agent.aupdate_state(config, {"messages": [HumanMessage("hi", id="h"), dangling]})
    result = await agent.ainvoke({"messages": [HumanMessage("next", id="h2")]}, config)
    kinds = [(type(m).__name__, getattr(m, "tool_call_id", None)) for m in result["messages"]]
    assert kinds == [
        ("HumanMessage", None),
        ("AIMessage", None),
        ("ToolMessage", "lost"),
        ("HumanMessage", None),
        ("AIMessage", None),
    ]


async def test_caller_middleware_replaces_a_builtin_by_name(tmp_path: Path) -> None:
    seen: list[str] = []

    class Patch(AgentMiddleware):
        name = "PatchToolCallsMiddleware"

        async def abefore_agent(self, state, runtime):
            seen.append("custom patch ran")

    class Extra(AgentMiddleware):
        name = "Extra"

    agent = create_deep_agent(
        ScriptedChatModel(turns=[{"content": "ok"}]),
        middleware=[Patch(), Extra()],
        backend=StateBackend(),
    )
    await agent.ainvoke({"messages": [HumanMessage("hi")]})
    assert seen == ["custom patch ran"]
    nodes = set(agent.get_graph().nodes)
    assert "PatchToolCallsMiddleware.before_agent" in nodes


async def test_scripted_multi_step_run_edits_a_real_workspace(tmp_path: Path) -> None:
    (tmp_path / "greet.py").write_text('def greet(name):\n    return "hi " + name\n')
    record = tmp_path.parent / "steps.jsonl"
    model = ScriptedChatModel(
        record=str(record),
        turns=[
            {"tool_calls": [{"id": "r", "name": "read_file", "args": {"file_path": "greet.py"}}]},
            {
                "tool_calls": [
                    {
                        "id": "e",
                        "name": "edit_file",
                        "args": {
                            "file_path": "greet.py",
                            "old_string": '"hi " + name',
                            "new_string": 'f"Hello, {name}!"',
                        },
                    },
                    {
                        "id": "w",
                        "name": "write_file",
                        "args": {
                            "file_path": "tests/test_greet.py",
                            "content": "from greet import greet\n",
                        },
                    },
                ]
            },
            {
                "tool_calls": [
                    {
                        "id": "x",
                        "name": "execute",
                        "args": {
                            "command": "python3 -c 'import greet; print(greet.greet(\"Ada\"))'"
                        },
                    }
                ]
            },
            {"content": "Greeting updated."},
        ],
    )
    agent = create_deep_agent(model, backend=LocalShellBackend(tmp_path))
    result = await agent.ainvoke({"messages": [HumanMessage("make greet friendlier")]})
    assert (tmp_path / "greet.py").read_text() == 'def greet(name):\n    return f"Hello, {name}!"\n'
    assert (tmp_path / "tests" / "test_greet.py").exists()
    assert result["messages"][-1].content == "Greeting updated."
    requests = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(requests) == 4
    assert "workspace root" in requests[0]["system"]
    assert requests[0]["tools"] == [
        "ls",
        "read_file",
        "write_file",
        "edit_file",
        "delete",
        "glob",
        "grep",
        "execute",
        "task",
    ]
    last = requests[3]["messages"]
    assert [m["type"] for m in last] == ["human", "ai", "tool", "ai", "tool", "tool", "ai", "tool"]
    assert last[-1]["content"] == "Hello, Ada!\n[exit code 0]"
