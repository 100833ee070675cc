"""Tool cards: what the editor shows for a tool call — its kind, title and locations, the
change an edit proposes (read from the file before the call runs), and the finished card's
text and whole-file diff."""

from __future__ import annotations

import dataclasses
from typing import Any

from langchain_core.messages import ToolCall, ToolMessage

from deepacp.backends.errors import BackendError, NotFoundError
from deepacp.backends.protocol import Backend, replace_exact
from deepacp.events import (
    Event,
    FileDiff,
    Location,
    PlanEntry,
    PlanStatus,
    PlanUpdated,
    ToolFinished,
    ToolKind,
    ToolStarted,
    ToolStatus,
)
from deepacp.harness import EditArtifact, card_text_of, text_of
from deepacp.harness import names as T
from deepacp.secrets import redact_any, secret_values

CARD_TEXT_CHARS = 20_000
PLAN_CARD_TEXT = "Updated the plan"
REJECTED_CARD_TEXT = "Rejected"
REJECTION_SOURCE = "hitl_interrupt_decision"
"""How LangChain's approval middleware marks the answer it gives the model for a rejection."""
_PLAN_STATUSES: tuple[PlanStatus, ...] = ("pending", "in_progress", "completed")

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
    T.CHECK_BACKGROUND_TASK: "think",
    T.LIST_BACKGROUND_TASKS: "think",
}
BRIEF_TITLE_CHARS = 60


def _location(backend: Backend, path: Any, line: int | None = None) -> Location | None:
    try:
        relative = backend.workspace_path(str(path))
        disk = backend.disk_path(str(path))
    except BackendError:
        return None
    return Location(str(disk) if disk else relative, line)


def clipped(text: Any, limit: int) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis."""
    line = " ".join(str(text or "").split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def describe_call(name: str, args: dict, backend: Backend) -> tuple[ToolKind, str, list[Location]]:
    """Kind, human title and locations of a tool call, for the editor's tool card."""
    kind = KINDS.get(name, "other")
    path = args.get("file_path") or args.get("path") or ""  # a model may send null
    shown = str(path) or "."
    try:
        shown = backend.workspace_path(str(path)) or "."
    except BackendError:
        pass
    line = None
    if name == T.READ_FILE and isinstance(args.get("offset"), int):
        line = args["offset"] + 1
    brief = clipped(args.get("description"), BRIEF_TITLE_CHARS)
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
        T.START_BACKGROUND_TASK: f"Background: {brief}",
        T.CHECK_BACKGROUND_TASK: f"Check background task {args.get('task_id', '')}",
        T.UPDATE_BACKGROUND_TASK: f"Update background task {args.get('task_id', '')}",
        T.CANCEL_BACKGROUND_TASK: f"Cancel background task {args.get('task_id', '')}",
        T.LIST_BACKGROUND_TASKS: "List background tasks",
    }
    title = titles.get(name, name)
    locations = []
    if kind in ("read", "edit", "delete", "search") and (loc := _location(backend, path, line)):
        locations.append(loc)
    return kind, title, locations


def tool_started(call: ToolCall, backend: Backend) -> ToolStarted:
    args = call.get("args") or {}
    kind, title, locations = describe_call(call["name"], args, backend)
    return ToolStarted(call["id"] or "", call["name"], kind, title, args, tuple(locations))


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
        disk = backend.disk_path(path)
        shown = str(disk) if disk else backend.workspace_path(path)
        # Redacted like the finished card's diff, which comes from a redacted tool result.
        secrets = secret_values()
        return FileDiff(shown, redact_any(before, secrets), redact_any(after, secrets))
    except (BackendError, OSError):
        return None


async def with_proposed_diff(event: ToolStarted, backend: Backend) -> ToolStarted:
    """`event` with the change it proposes, and its location at the first changed line."""
    diff = await proposed_diff(event.name, event.args, backend)
    if diff is None:
        return event
    line = _first_changed_line(diff.old_text or "", diff.new_text or "")
    return dataclasses.replace(event, diff=diff, locations=(Location(diff.path, line),))


def plan_from(call: ToolCall) -> PlanUpdated | None:
    """A write_todos call carries the whole new task list: that is the plan."""
    if call["name"] != T.WRITE_TODOS:
        return None
    return plan_of((call.get("args") or {}).get("todos"))


def plan_of(todos: Any) -> PlanUpdated:
    """The plan a task list (as write_todos takes it, or the state keeps it) shows."""
    entries = []
    for todo in todos or []:
        if isinstance(todo, dict) and todo.get("content"):
            status = todo.get("status")
            entries.append(
                PlanEntry(str(todo["content"]), status if status in _PLAN_STATUSES else "pending")
            )
    return PlanUpdated(tuple(entries))


def call_events(call: ToolCall, backend: Backend) -> list[Event]:
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


def _rejected(message: ToolMessage) -> bool:
    extra = message.additional_kwargs or {}
    data = extra.get("lc_data")
    decision = data.get("decision") if isinstance(data, dict) else None
    return extra.get("lc_source") == REJECTION_SOURCE and decision == "reject"


def card_text(message: ToolMessage, name: str | None) -> str:
    """What the card of a finished call says: the result, except where that was written
    for the model (a rejection's instructions, the plan tool's echo of the plan, what a
    tool said for people apart: `card_text_of`)."""
    if _rejected(message):
        return REJECTED_CARD_TEXT
    if (for_people := card_text_of(message)) is not None:
        return for_people
    if name == T.WRITE_TODOS and message.status != "error":
        return PLAN_CARD_TEXT
    text = text_of(message.content)
    if len(text) > CARD_TEXT_CHARS:
        text = text[:CARD_TEXT_CHARS] + "\n… [clipped]"
    return text


def tool_finished(message: ToolMessage, name: str | None) -> ToolFinished:
    """The finished card of the call `message` answers (`name`: the tool it called)."""
    status: ToolStatus = "failed" if message.status == "error" else "completed"
    text = card_text(message, name or message.name)
    artifact = EditArtifact.from_json(message.artifact)
    if artifact is None:
        return ToolFinished(message.tool_call_id, status, text)
    diff = FileDiff(artifact.shown_path, artifact.old_text, artifact.new_text)
    line = None
    if diff.new_text is not None:
        line = _first_changed_line(diff.old_text or "", diff.new_text)
    return ToolFinished(message.tool_call_id, status, text, diff, (Location(diff.path, line),))
