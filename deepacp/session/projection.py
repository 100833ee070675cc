"""LangGraph output -> protocol-neutral events: one projection for live turns and replay.

Live turns add one thing replay cannot know: the change an edit proposes, read from the
file before the call runs (`with_proposed_diff`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.types import Command

from deepacp.backends.errors import BackendError, NotFoundError
from deepacp.backends.protocol import Backend, replace_exact
from deepacp.events import (
    Event,
    FileDiff,
    Location,
    MessageChunk,
    PlanEntry,
    PlanUpdated,
    StopReason,
    ThoughtChunk,
    ToolFinished,
    ToolKind,
    ToolOutput,
    ToolRunning,
    ToolStarted,
    ToolTerminal,
    UsageUpdated,
    UserMessage,
)
from deepacp.harness import names as T
from deepacp.harness.messages import text_of
from deepacp.harness.tools import edit_artifact
from deepacp.secrets import redact_any, secret_values

CARD_TEXT_CHARS = 20_000
PLAN_CARD_TEXT = "Updated the plan"
REJECTED_CARD_TEXT = "Rejected"
REJECTION_SOURCE = "hitl_interrupt_decision"
"""How LangChain's approval middleware marks the answer it gives the model for a rejection."""
_PLAN_STATUSES = ("pending", "in_progress", "completed")
DEFAULT_CONTEXT_WINDOW = 200_000

KINDS: dict[str, ToolKind] = {
    T.LS: "read",
    T.READ_FILE: "read",
    T.WRITE_FILE: "edit",
    T.EDIT_FILE: "edit",
    T.DELETE: "delete",
    T.GLOB: "search",
    T.GREP: "search",
    T.EXECUTE: "execute",
    T.WRITE_TODOS: "think",
}


def _location(backend: Backend, path: Any, line: int | None = None) -> Location | None:
    try:
        relative = backend.workspace_path(str(path))
        disk = backend.disk_path(str(path))
    except BackendError:
        return None
    return Location(str(disk) if disk else relative, line)


def describe_call(name: str, args: dict, backend: Backend) -> tuple[ToolKind, str, list[Location]]:
    """Kind, human title and locations of a tool call, for the editor's tool card."""
    kind = KINDS.get(name, "other")
    path = args.get("file_path", args.get("path", ""))
    shown = str(path) or "."
    try:
        shown = backend.workspace_path(str(path)) or "."
    except BackendError:
        pass
    line = None
    if name == T.READ_FILE and isinstance(args.get("offset"), int):
        line = args["offset"] + 1
    titles = {
        T.LS: f"List {shown}",
        T.READ_FILE: f"Read {shown}",
        T.WRITE_FILE: f"Write {shown}",
        T.EDIT_FILE: f"Edit {shown}",
        T.DELETE: f"Delete {shown}",
        T.GLOB: f"Find {args.get('pattern', '')} in {shown}",
        T.GREP: f"Search {args.get('pattern', '')!r} in {shown}",
        T.EXECUTE: str(args.get("command", "")),
        T.WRITE_TODOS: "Update plan",
    }
    title = titles.get(name, name)
    locations = []
    if kind in ("read", "edit", "delete", "search") and (loc := _location(backend, path, line)):
        locations.append(loc)
    return kind, title, locations


def tool_started(call: dict, backend: Backend) -> ToolStarted:
    args = call.get("args") or {}
    kind, title, locations = describe_call(call["name"], args, backend)
    return ToolStarted(call["id"], call["name"], kind, title, args, tuple(locations))


async def proposed_diff(name: str, args: dict, backend: Backend) -> FileDiff | None:
    """The whole-file diff a write, edit or delete would make, computed from the file's
    current text (read through `backend`, so an editor's unsaved buffer counts) without
    touching it, secrets redacted; None when the call would fail or there is no text to
    show."""
    path = args.get("file_path")
    if name not in (T.WRITE_FILE, T.EDIT_FILE, T.DELETE) or not isinstance(path, str):
        return None
    try:
        try:
            before: str | None = await backend.read_text(path)
        except NotFoundError:
            before = None
        if name == T.WRITE_FILE:
            after = args.get("content")
            if not isinstance(after, str):
                return None
        elif before is None:
            return None  # nothing to edit or delete
        elif name == T.EDIT_FILE:
            after, _ = replace_exact(
                before,
                str(args.get("old_string", "")),
                str(args.get("new_string", "")),
                replace_all=bool(args.get("replace_all", False)),
                path=path,
            )
        else:
            after = None
        # Redacted like the finished card's diff, which comes from a redacted tool result.
        return _diff_of(redact_any(edit_artifact(backend, path, before, after), secret_values()))
    except (BackendError, OSError):
        return None


async def with_proposed_diff(event: ToolStarted, backend: Backend) -> ToolStarted:
    """`event` with the change it proposes, and its location at the first changed line."""
    diff = await proposed_diff(event.name, event.args, backend)
    if diff is None:
        return event
    line = _first_changed_line(diff.old_text or "", diff.new_text or "")
    return dataclasses.replace(event, diff=diff, locations=(Location(diff.path, line),))


def plan_from(call: dict) -> PlanUpdated | None:
    """A write_todos call carries the whole new task list: that is the plan."""
    if call["name"] != T.WRITE_TODOS:
        return None
    entries = []
    for todo in (call.get("args") or {}).get("todos") or []:
        if isinstance(todo, dict) and todo.get("content"):
            status = todo.get("status") if todo.get("status") in _PLAN_STATUSES else "pending"
            entries.append(PlanEntry(str(todo["content"]), status))
    return PlanUpdated(tuple(entries))


def call_events(call: dict, backend: Backend) -> list[Event]:
    """The events for a tool call the model made: its card, and the plan it carries."""
    events: list[Event] = [tool_started(call, backend)]
    if plan := plan_from(call):
        events.append(plan)
    return events


def _first_changed_line(old: str, new: str) -> int:
    old_lines, new_lines = old.splitlines(), new.splitlines()
    for number, (a, b) in enumerate(zip(old_lines, new_lines, strict=False), start=1):
        if a != b:
            return number
    return min(len(old_lines), len(new_lines)) + 1


def _diff_of(artifact: dict) -> FileDiff:
    return FileDiff(
        artifact.get("abs_path") or artifact["path"],
        artifact.get("old_text"),
        artifact.get("new_text"),
    )


def _rejected(message: ToolMessage) -> bool:
    extra = message.additional_kwargs or {}
    decision = extra.get("lc_data") if isinstance(extra.get("lc_data"), dict) else {}
    return extra.get("lc_source") == REJECTION_SOURCE and decision.get("decision") == "reject"


def card_text(message: ToolMessage, name: str | None) -> str:
    """What the card of a finished call says: the result, except where that was written
    for the model (a rejection's instructions, the plan tool's echo of the plan)."""
    if _rejected(message):
        return REJECTED_CARD_TEXT
    if name == T.WRITE_TODOS and message.status != "error":
        return PLAN_CARD_TEXT
    text = text_of(message.content)
    if len(text) > CARD_TEXT_CHARS:
        text = text[:CARD_TEXT_CHARS] + "\n… [clipped]"
    return text


def tool_finished(message: ToolMessage, name: str | None) -> ToolFinished:
    """The finished card of the call `message` answers (`name`: the tool it called)."""
    status = "failed" if message.status == "error" else "completed"
    text = card_text(message, name or message.name)
    artifact = message.artifact if isinstance(message.artifact, dict) else None
    if not artifact or "new_text" not in artifact:
        return ToolFinished(message.tool_call_id, status, text)
    diff = _diff_of(artifact)
    line = None
    if diff.new_text is not None:
        line = _first_changed_line(diff.old_text or "", diff.new_text)
    return ToolFinished(message.tool_call_id, status, text, diff, (Location(diff.path, line),))


def text_and_thought(message: BaseMessage) -> tuple[str, str]:
    """The visible text and the reasoning of an AI message or chunk."""
    text, thought = [], []
    try:
        blocks = message.content_blocks
    except Exception:
        return text_of(message.content), ""
    for block in blocks:
        if block.get("type") == "text":
            text.append(str(block.get("text", "")))
        elif block.get("type") == "reasoning":
            thought.append(str(block.get("reasoning", "")))
    return "".join(text), "".join(thought)


def human_text(message: HumanMessage) -> str:
    return text_of(message.content)


def stop_reason(message: AIMessage | None) -> StopReason:
    """The ACP stop reason a final AI message implies."""
    if message is None:
        return "end_turn"
    meta = message.response_metadata or {}
    reason = str(meta.get("finish_reason") or meta.get("stop_reason") or "").lower()
    if reason in ("length", "max_tokens"):
        return "max_tokens"
    if reason in ("refusal", "content_filter"):
        return "refusal"
    return "end_turn"


def usage(message: AIMessage, window: int | None) -> UsageUpdated | None:
    meta = message.usage_metadata
    if not meta:
        return None
    return UsageUpdated(
        used=int(meta.get("input_tokens", 0)) + int(meta.get("output_tokens", 0)),
        size=window or DEFAULT_CONTEXT_WINDOW,
    )


def replay(messages: list[AnyMessage], backend: Backend) -> Iterator[Event]:
    """The events a client needs to redraw a thread's history."""
    names: dict[str, str] = {}
    for message in messages:
        if isinstance(message, HumanMessage):
            yield UserMessage(human_text(message))
        elif isinstance(message, AIMessage):
            text, thought = text_and_thought(message)
            if thought:
                yield ThoughtChunk(thought)
            if text:
                yield MessageChunk(text)
            for call in message.tool_calls:
                names[call["id"]] = call["name"]
                yield from call_events(call, backend)
        elif isinstance(message, ToolMessage):
            yield tool_finished(message, names.get(message.tool_call_id))


class LiveProjection:
    """Turns one turn's `astream` output into events, announcing and finishing each tool
    call exactly once (resumed runs re-emit updates LangGraph already reported)."""

    def __init__(self, backend: Backend, window: int | None) -> None:
        self.backend = backend
        self.window = window
        self.announced: dict[str, str] = {}
        """The tool calls announced so far, by id: the tool each one calls."""
        self.finished: set[str] = set()
        self.started: dict[str, ToolStarted] = {}
        """The cards as announced (with their proposed diffs), for the approval prompts."""
        self.interrupts: list[Any] = []
        self.last_ai: AIMessage | None = None
        self.tokens = {"input": 0, "output": 0}
        """Tokens over the turn's model calls, as the model reported them."""

    def feed(self, namespace: tuple, mode: str, data: Any) -> list[Event]:
        if namespace:
            return []  # sub-agent internals stay inside their parent's card
        if mode == "messages":
            chunk, meta = data
            if meta.get("langgraph_node") != "model" or isinstance(chunk, ToolMessage):
                return []
            text, thought = text_and_thought(chunk)
            events: list[Event] = []
            if thought:
                events.append(ThoughtChunk(thought))
            if text:
                events.append(MessageChunk(text))
            return events
        if mode == "tools":
            if data.get("event") == "tool-started" and data["tool_call_id"] in self.announced:
                return [ToolRunning(data["tool_call_id"])]
            return []
        if mode == "custom":
            kind = data.get("type") if isinstance(data, dict) else None
            if kind == "tool_output":
                return [ToolOutput(data["tool_call_id"], data["text"])]
            if kind == "tool_terminal":
                return [ToolTerminal(data["tool_call_id"], data["terminal_id"])]
            return []
        if mode == "updates":
            return self._updates(data)
        return []

    def _updates(self, data: dict) -> list[Event]:
        events: list[Event] = []
        for node, update in data.items():
            if node == "__interrupt__":
                self.interrupts.extend(update)
                continue
            for message in messages_of(update):
                if isinstance(message, AIMessage) and node == "model":
                    self.last_ai = message
                    for key in self.tokens:
                        self.tokens[key] += int(
                            (message.usage_metadata or {}).get(f"{key}_tokens", 0)
                        )
                    if usage_event := usage(message, self.window):
                        events.append(usage_event)
                    for call in message.tool_calls:
                        if call["id"] not in self.announced:
                            self.announced[call["id"]] = call["name"]
                            events.extend(call_events(call, self.backend))
                elif (
                    isinstance(message, ToolMessage)
                    and node == "tools"
                    and message.tool_call_id in self.announced
                    and message.tool_call_id not in self.finished
                ):
                    self.finished.add(message.tool_call_id)
                    events.append(tool_finished(message, self.announced[message.tool_call_id]))
        return events


def messages_of(update: Any) -> list[Any]:
    """Messages in a node's update, whatever shape it has (dict, Command, list of them)."""
    if update is None:
        return []
    if isinstance(update, list | tuple):
        return [m for item in update for m in messages_of(item)]
    payload = update.update if isinstance(update, Command) else update
    if isinstance(payload, dict):
        messages = payload.get("messages") or []
        return list(messages) if isinstance(messages, list | tuple) else [messages]
    return []
