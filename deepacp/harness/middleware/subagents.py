"""SubAgentMiddleware: the `task` tool, delegation with context quarantine.

A child starts from the brief alone (plus the parent's shared, non-private state such as
`files`), runs its own loop, and hands back only its final answer. Children have no `task`
tool, so delegation never recurses. A file a child deletes is deleted in the parent too:
its merge-back carries explicit tombstones. Parallel `task` calls in one model message run
concurrently (LangGraph fans tool calls out).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool, ToolException
from langgraph.errors import GraphBubbleUp
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict, Field

from deepacp.backends.state import FilesUpdate
from deepacp.events import StepStatus
from deepacp.harness.contracts import SubagentStepSignal
from deepacp.harness.delegation import current_task_call
from deepacp.harness.messages import text_of
from deepacp.harness.names import TASK
from deepacp.harness.usage import USAGE_KEY

GENERAL_PURPOSE = "general-purpose"
GENERAL_PURPOSE_DESCRIPTION = (
    "Your tools in a context of its own: for research or work of many steps."
)
GENERAL_PURPOSE_PROMPT = (
    "You are a sub-agent: another agent gave you the task below. Do it with your tools, then "
    "answer with a concise report of what you found or did — that report is all it will see."
)

# State that never crosses into or out of a child: its own conversation, its own plan and
# background tasks (its token usage goes back to the parent, added to the parent's).
EXCLUDED_STATE = frozenset(
    {
        "messages",
        "todos",
        "structured_response",
        "jump_to",
        "hitl_edited_tool_calls",
        "background_tasks",
        USAGE_KEY,
    }
)


@dataclass
class SubAgent:
    """A declarative sub-agent, compiled with its own stack (no `task` tool)."""

    name: str
    description: str
    system_prompt: str
    tools: Sequence[Any] | None = None
    """None: the parent's tools."""
    model: Any = None
    """A chat model or spec string; None: the parent's model."""
    middleware: Sequence[AgentMiddleware] = field(default_factory=tuple)
    skills: Sequence[str] | None = None
    """Skill folders; None: the parent's."""


@dataclass
class CompiledSubAgent:
    """Any runnable that takes `{"messages": [...]}` and returns state with `messages`."""

    name: str
    description: str
    runnable: Any


class TaskArgs(BaseModel):
    # Models sometimes put the real instructions under an invented key: refuse those calls.
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    description: str = Field(
        description="The whole brief (goal, what you know, what to report): the sub-agent sees "
        "nothing else."
    )
    subagent_type: str = Field(description="A sub-agent the task tool lists.")
    runtime: ToolRuntime  # injected by the tool node; not part of what the model sees


def child_input(state: Mapping[str, Any], brief: str) -> dict[str, Any]:
    shared = {k: v for k, v in state.items() if k not in EXCLUDED_STATE and not k.startswith("_")}
    return {**shared, "messages": [HumanMessage(brief)]}


def files_delta(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> FilesUpdate:
    """The child's file changes as an update for the parent: writes, and None tombstones
    for what it deleted (so the parent's merge drops them instead of keeping them)."""
    before, after = before or {}, after or {}
    delta: FilesUpdate = {p: r for p, r in after.items() if before.get(p) != r}
    delta.update({p: None for p in before if p not in after})
    return delta


def final_report(state: Mapping[str, Any]) -> str:
    if (structured := state.get("structured_response")) is not None:
        if isinstance(structured, BaseModel):
            return structured.model_dump_json()
        return json.dumps(structured, default=str)
    for message in reversed(state.get("messages", [])):
        if isinstance(message, AIMessage) and (text := text_of(message.content).strip()):
            return text
    return "(the sub-agent finished without a report)"


def agents_offered(agents: Mapping[str, str]) -> str:
    """The sub-agents a tool's description offers (name: description)."""
    listing = "\n".join(f"- {name}: {description}" for name, description in agents.items())
    return f"Sub-agents (subagent_type):\n{listing}"


def task_description(agents: Mapping[str, str]) -> str:
    return (
        "Give a self-contained task to a sub-agent, which works in its own context and "
        "answers with a report. Calls in one message run in parallel."
        f"\n\n{agents_offered(agents)}"
    )


async def stream_child(
    agent: Any, payload: dict, card_id: str, write: Callable[[Any], None]
) -> dict:
    """Run a child graph, reporting each tool call it makes on the card `card_id` as it
    starts and as it ends."""
    final: dict = {}
    async for mode, data in agent.astream(payload, stream_mode=["updates", "values"]):
        if mode == "values":
            final = data
            continue
        for update in (data or {}).values():
            messages = update.get("messages", []) if isinstance(update, dict) else []
            for message in messages:
                for signal in _steps(card_id, message):
                    write(signal)
    return final


def _steps(card_id: str, message: Any) -> list[SubagentStepSignal]:
    """The child's tool calls a message starts (an AI message) or ends (a tool result)."""
    if isinstance(message, ToolMessage):
        status: StepStatus = "failed" if message.status == "error" else "completed"
        call_id, name = message.tool_call_id, message.name or ""
        return [SubagentStepSignal(card_id, call_id, name, {}, status)]
    return [
        SubagentStepSignal(card_id, call["id"] or "", call["name"], call["args"], "in_progress")
        for call in getattr(message, "tool_calls", None) or []
    ]


class SubAgentMiddleware(AgentMiddleware):
    """Adds the `task` tool over a set of compiled sub-agents."""

    def __init__(
        self,
        agents: Mapping[str, Any],
        descriptions: Mapping[str, str],
        streaming: frozenset[str] = frozenset(),
    ) -> None:
        """`streaming` names the children that are LangGraph graphs: their tool calls are
        reported on the parent's card as they start and end. Other runnables are simply
        invoked."""
        super().__init__()
        self.agents = dict(agents)
        self.streaming = streaming

        async def task(description: str, subagent_type: str, runtime: ToolRuntime) -> Command:
            return await self._run(description, subagent_type, runtime)

        self.tools = [
            StructuredTool.from_function(
                coroutine=task,
                name=TASK,
                description=task_description(descriptions),
                args_schema=TaskArgs,
                handle_tool_error=True,
            )
        ]

    async def _run(self, brief: str, subagent_type: str, runtime: ToolRuntime) -> Command:
        agent = self.agents.get(subagent_type)
        if agent is None:
            known = ", ".join(sorted(self.agents))
            raise ToolException(f"unknown subagent_type {subagent_type!r}; use one of: {known}")
        call_id = runtime.tool_call_id
        state = runtime.state or {}
        token = current_task_call.set(call_id)
        try:
            if subagent_type in self.streaming:
                payload = child_input(state, brief)
                final = await stream_child(agent, payload, call_id or "", runtime.stream_writer)
            else:
                final = await agent.ainvoke(child_input(state, brief))
        except GraphBubbleUp:
            raise  # an approval inside the child: the parent pauses and resumes it
        except Exception as exc:
            raise ToolException(f"the {subagent_type} sub-agent failed: {exc}") from exc
        finally:
            current_task_call.reset(token)
        final = final if isinstance(final, Mapping) else {}
        update: dict[str, Any] = {
            "messages": [ToolMessage(final_report(final), tool_call_id=call_id, name=TASK)]
        }
        if delta := files_delta(state.get("files"), final.get("files")):
            update["files"] = delta
        if used := final.get(USAGE_KEY):
            update[USAGE_KEY] = used
        return Command(update=update)
