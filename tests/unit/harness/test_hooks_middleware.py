"""HooksMiddleware: the tool events of the agent and of its sub-agents reach the runner,
and its decisions — refuse, rewrite — are what the tools and the model see."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage, ToolMessage

from deepacp import create_deep_agent
from deepacp.harness.contracts import ALLOW, HookDecision
from deepacp.harness.middleware.subagents import SubAgent
from deepacp.testing import ScriptedChatModel
from tests.support.turns import call, calls


class Runner:
    """Records every event and refuses `ls`; rewrites the content of every write_file."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    async def __call__(self, event: str, fields: dict[str, Any], /) -> HookDecision:
        self.events.append((event, fields))
        if event == "pre_tool_use" and fields["tool_name"] == "ls":
            return HookDecision(False, "listing is off")
        if event == "pre_tool_use" and fields["tool_name"] == "write_file":
            return HookDecision(args={**fields["tool_args"], "content": "rewritten"})
        return ALLOW


def results(state: dict) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}


async def test_sub_agent_tool_calls_pass_the_hooks_too() -> None:
    task = {"description": "List and write.", "subagent_type": "helper"}
    parent = ScriptedChatModel(
        turns=[
            {"tool_calls": [{"id": "t1", "name": "task", "args": task}]},
            {"content": "Done."},
        ]
    )
    child = ScriptedChatModel(
        turns=[
            calls(
                call("c1", "ls", path="/"),
                call("c2", "write_file", file_path="/a.txt", content="x"),
            ),
            {"content": "Listed and wrote."},
        ]
    )
    runner = Runner()
    helper = SubAgent("helper", "Helps.", "You help.", model=child)
    agent = create_deep_agent(parent, subagents=[helper], hooks=runner)
    state = await agent.ainvoke({"messages": [HumanMessage("go")]})

    assert state["files"]["a.txt"]["content"] == "rewritten"
    seen = [(event, fields.get("tool_call_id")) for event, fields in runner.events]
    assert ("pre_tool_use", "t1") in seen and ("subagent_start", "t1") in seen
    assert ("pre_tool_use", "c1") in seen
    assert [e for e, i in seen if i == "c1" and e.startswith("post")] == []  # refused: never ran
    assert ("post_tool_use", "c2") in seen and ("subagent_stop", "t1") in seen
    [(_, written)] = [
        (e, f) for e, f in runner.events if e == "post_tool_use" and f["tool_call_id"] == "c2"
    ]
    assert written["tool_args"]["content"] == "rewritten"
    [stop] = [f for e, f in runner.events if e == "subagent_stop"]
    assert stop["report"] == "Listed and wrote." and stop["tool_status"] == "success"


async def test_a_refused_call_is_answered_with_the_reason() -> None:
    model = ScriptedChatModel(
        turns=[
            {"tool_calls": [{"id": "l1", "name": "ls", "args": {"path": "/"}}]},
            {"content": "ok"},
        ]
    )
    runner = Runner()
    state = await create_deep_agent(model, hooks=runner).ainvoke({"messages": [HumanMessage("ls")]})
    refused = results(state)["l1"]
    assert refused.status == "error" and refused.content == "Refused by a hook: listing is off"
    assert [e for e, _ in runner.events] == ["pre_tool_use"]
