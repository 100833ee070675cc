"""The agent's checkpointed state: an append-only message log stored as deltas, and files."""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, NotRequired, Required, cast

from langchain.agents.middleware import AgentState
from langchain_core.messages import (
    AnyMessage,
    BaseMessage,
    BaseMessageChunk,
    RemoveMessage,
    convert_to_messages,
    message_chunk_to_message,
)
from langgraph.channels import DeltaChannel
from langgraph.graph import START, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from deepacp.backends.state import FileRecord, merge_files

_message_id = operator.attrgetter("id")


def append_messages(state: list[AnyMessage], writes: Sequence[Any]) -> list[AnyMessage]:
    """Batch reducer for the messages delta channel (add_messages semantics).

    New messages append; a message with a known id replaces it; `RemoveMessage(id)` drops
    one; `RemoveMessage(REMOVE_ALL_MESSAGES)` starts over. Batching-invariant, as
    DeltaChannel requires, so a checkpoint stores only each step's new messages.
    """
    flat: list[Any] = []
    for write in writes:
        flat.extend(write if isinstance(write, list) else [write])
    incoming = [
        message_chunk_to_message(m) if isinstance(m, BaseMessageChunk) else m
        for m in convert_to_messages(flat)
    ]
    if state and not isinstance(state[0], BaseMessage):
        state = convert_to_messages(state)
    result: list[BaseMessage | None] = list(state)
    # Built in C: a long thread's reducer runs at every write. (None, the id of messages
    # without one, is never looked up.)
    index = dict(zip(map(_message_id, result), range(len(result)), strict=True))
    removed = False
    for message in incoming:
        if isinstance(message, RemoveMessage):
            if message.id == REMOVE_ALL_MESSAGES:
                result, index = [], {}
            elif message.id in index:
                result[index.pop(message.id)] = None
                removed = True
            continue
        if message.id is not None and message.id in index:
            result[index[message.id]] = message
        else:
            if message.id is not None:
                index[message.id] = len(result)
            result.append(message)
    if removed:
        result = [m for m in result if m is not None]
    return result  # type: ignore[return-value]  # AnyMessage: a union of BaseMessage subclasses


MESSAGES = "messages"
MESSAGES_CHANNEL = DeltaChannel(append_messages, list, snapshot_frequency=1000)
"""The messages channel: stored as per-step deltas, so checkpoints grow linearly with the
thread; a full snapshot every 1000 updates bounds how many deltas a load replays."""


class DeepAgentState(AgentState):
    """State of a deepacp agent thread."""

    messages: Required[Annotated[list[AnyMessage], MESSAGES_CHANNEL]]
    files: NotRequired[Annotated[dict[str, FileRecord], merge_files]]


async def read_messages(checkpointer: Any, config: Any) -> list[AnyMessage]:
    """A thread's messages as its agent sees them, read from the checkpoints without
    building the agent (no model, middleware or tools): what a replay needs."""
    reader = StateGraph(DeepAgentState)
    reader.add_node("read", lambda _: None)
    reader.add_edge(START, "read")
    state = await reader.compile(checkpointer=checkpointer).aget_state(config)
    return list(state.values.get("messages", []))


async def read_value(checkpointer: Any, config: Any, key: str) -> Any:
    """One plain (not delta-stored) value of a thread's latest checkpoint, or None: read
    without re-assembling the message history, as the whole state would be."""
    saved = await checkpointer.aget_tuple(config)
    return None if saved is None else saved.checkpoint["channel_values"].get(key)


def state_files(state: Mapping[str, object]) -> Mapping[str, FileRecord] | None:
    """The `files` of a run's state (typed by each middleware's schema, read by all)."""
    return cast("Mapping[str, FileRecord] | None", state.get("files"))
