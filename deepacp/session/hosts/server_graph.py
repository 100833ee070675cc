"""The harness on a LangGraph server (`deepacp --server URL`): `ServerGraph` drives the
server's `deepacp` graph through langgraph-sdk with the part of a compiled graph's interface
a turn uses (`astream`, `aget_state`, `aupdate_state`), reviving the server's JSON into the
objects a local run streams, so one projection serves both. Each run carries the session's
`RunSettings` (the workspace on the server, the model, the mode, the "always" answers)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import convert_to_messages
from langgraph.types import Command, Interrupt

from deepacp.errors import TurnError
from deepacp.harness import ApprovalInterrupt, parse_interrupt, signal_from_json
from deepacp.session.hosts.threads import (
    RunSettings,
    ServerThreads,
    server_errors,
    server_thread_id,
)
from deepacp.session.turns.approvals import ApprovalPolicy

GRAPH_ID = "deepacp"
"""The graph's name in langgraph.json."""
SERVER_STREAM_MODES: list[Any] = ["messages-tuple", "updates", "custom"]
"""What a run streams back (the server has no `tools` mode; `messages-tuple` arrives as
`messages`)."""
_MESSAGE_TYPES: dict[str, type[BaseMessage]] = {
    "human": HumanMessage,
    "ai": AIMessage,
    "AIMessageChunk": AIMessageChunk,
    "tool": ToolMessage,
    "system": SystemMessage,
}


def message_from_json(value: Any) -> Any:
    """A message as the server sent it (a dict), as the message object it was."""
    if not isinstance(value, dict):
        return value
    kind = _MESSAGE_TYPES.get(str(value.get("type")))
    if kind is not None:
        return kind.model_validate(value)
    return convert_to_messages([value])[0]


def update_from_json(node: str, update: Any) -> Any:
    """A node's update as the server sent it, with its messages (or interrupts) revived."""
    if node == "__interrupt__":
        return [Interrupt(value=i.get("value"), id=i.get("id", "")) for i in update or ()]
    if isinstance(update, dict) and isinstance(update.get("messages"), list):
        return {**update, "messages": [message_from_json(m) for m in update["messages"]]}
    return update


def to_json(value: Any) -> Any:
    """Input for the server: messages as dicts, the rest as it is."""
    if isinstance(value, BaseMessage):
        return value.model_dump()
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    return value


@dataclass(frozen=True)
class ServerTask:
    """A pending task of a thread's state, as `Turn.settle` reads it."""

    result: Any


@dataclass(frozen=True)
class ServerState:
    values: dict[str, Any]
    tasks: tuple[ServerTask, ...]
    config: dict[str, Any]
    """Where the state is (`configurable.checkpoint_id`), as a local graph's state says."""


class ServerGraph:
    """A session's harness, running on the server of `threads`: each run carries the
    session's `settings` of the moment."""

    def __init__(
        self, threads: ServerThreads, policy: ApprovalPolicy, settings: Callable[[], RunSettings]
    ) -> None:
        self.threads = threads
        self.client = threads.client
        self.policy = policy
        self.settings = settings

    def _config(self, config: dict[str, Any]) -> tuple[str, Any]:
        """The thread id, and the run config the server gets (our settings in it)."""
        configurable = dict(config.get("configurable") or {})
        thread_id = server_thread_id(str(configurable.pop("thread_id")))
        run_config = {
            **config,
            "configurable": {**configurable, **self.settings().as_configurable()},
        }
        return thread_id, run_config

    async def astream(
        self,
        payload: Any,
        config: dict[str, Any],
        *,
        stream_mode: Any = None,
        subgraphs: bool = True,
    ) -> AsyncIterator[tuple[tuple[str, ...], str, Any]]:
        """Run the graph on the thread and stream `(namespace, mode, data)` like a local
        graph does; cancelling the stream cancels the server's run."""
        thread_id, run_config = self._config(config)
        resume = isinstance(payload, Command)
        command: Any = {"resume": to_json(payload.resume)} if resume else None
        run_input = None if resume else to_json(payload)
        run_id: str | None = None
        try:
            async for part in self.client.runs.stream(
                thread_id,
                GRAPH_ID,
                config=run_config,
                input=run_input,
                command=command,
                stream_mode=SERVER_STREAM_MODES,
                stream_subgraphs=subgraphs,
                multitask_strategy="reject",
                if_not_exists="create",
            ):
                mode, *rest = part.event.split("|")
                namespace = tuple(rest)
                if mode == "metadata":
                    run_id = part.data.get("run_id")
                elif mode == "error":
                    raise TurnError(f"the server's run failed: {_error_text(part.data)}")
                elif mode == "messages":
                    chunk, meta = part.data
                    yield namespace, mode, (message_from_json(chunk), meta)
                elif mode == "updates" and isinstance(part.data, dict):
                    data = {n: update_from_json(n, u) for n, u in part.data.items()}
                    self._note_asked(data.get("__interrupt__") or [])
                    yield namespace, mode, data
                elif mode == "custom":
                    yield namespace, mode, signal_from_json(part.data)
        except asyncio.CancelledError:
            if run_id is not None:
                await asyncio.shield(self._cancel(thread_id, run_id))
            raise
        except server_errors() as exc:
            raise self.threads.unavailable(exc) from None

    def _note_asked(self, interrupts: list[Interrupt]) -> None:
        """Calls the server asked about stay gated on resume, whatever the mode is then."""
        for item in interrupts:
            try:
                asked = parse_interrupt(item.value)
            except ValueError:
                continue
            if isinstance(asked, ApprovalInterrupt):
                self.policy.asked.add(asked.tool_call_id)

    async def _cancel(self, thread_id: str, run_id: str) -> None:
        await self.client.runs.cancel(thread_id, run_id, wait=True)

    async def aget_state(self, config: dict[str, Any]) -> ServerState:
        thread_id, _ = self._config(config)
        return await server_state(self.threads, thread_id)

    async def aupdate_state(
        self, config: dict[str, Any], values: dict[str, Any], as_node: str | None = None
    ) -> None:
        thread_id, _ = self._config(config)
        try:
            await self.client.threads.update_state(thread_id, to_json(values), as_node=as_node)
        except server_errors() as exc:
            raise self.threads.unavailable(exc) from None

    async def messages(self, config: dict[str, Any]) -> list[AnyMessage]:
        """The thread's conversation so far (empty for a thread with no run yet)."""
        return (await self.aget_state(config)).values["messages"]


async def server_state(threads: ServerThreads, thread_id: str) -> ServerState:
    """A thread's state on the server, revived (empty for a thread with no run yet)."""
    try:
        state = await threads.client.threads.get_state(thread_id)
    except server_errors() as exc:
        raise threads.unavailable(exc) from None
    raw = state.get("values")
    values = dict(raw) if isinstance(raw, dict) else {}
    values["messages"] = [message_from_json(m) for m in values.get("messages") or []]
    tasks = tuple(
        ServerTask(update_from_json("", task.get("result"))) for task in state.get("tasks") or []
    )
    checkpoint = state.get("checkpoint") or {}
    at = {"configurable": {"checkpoint_id": checkpoint.get("checkpoint_id")}}
    return ServerState(values, tasks, at)


def _error_text(data: Any) -> str:
    if isinstance(data, dict):
        return str(data.get("message") or data.get("error") or data)
    return str(data)
