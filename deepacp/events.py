"""Protocol-neutral events: what a session tells its face (ACP, LSP, terminal).

The session runtime produces them from LangGraph output, live and on history replay, with
one projection; each face translates them to its wire protocol in one place.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from typing import Literal

ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
ToolStatus = Literal["completed", "failed"]
StepStatus = Literal["in_progress", "completed", "failed"]
NoticeSeverity = Literal["info", "warning", "error"]
CompactionStatus = Literal["in_progress", "completed", "failed", "cancelled"]
PlanStatus = Literal["pending", "in_progress", "completed"]
StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]


@dataclass(frozen=True, slots=True)
class Location:
    path: str
    """Absolute path on disk (or the workspace path of a file that is not on disk)."""
    line: int | None = None


@dataclass(frozen=True, slots=True)
class FileDiff:
    path: str
    old_text: str | None
    """None for a new file."""
    new_text: str | None
    """None for a deleted file."""


@dataclass(frozen=True, slots=True)
class UserMessage:
    text: str
    message_id: str | None = None
    """The message's id, the same live and replayed (its chunks share it; None: text in no
    thread, shown in one piece, which the face gives a `new_message_id`)."""


@dataclass(frozen=True, slots=True)
class MessageChunk:
    text: str
    message_id: str | None = None


@dataclass(frozen=True, slots=True)
class ThoughtChunk:
    text: str
    message_id: str | None = None


def new_message_id() -> str:
    """An id for a message shown once and kept in no thread (a command's answer)."""
    return f"msg-{uuid.uuid4().hex}"


def notice_id(text: str) -> str:
    """A notice shown as the agent's text: its id follows from its words, so a notice
    replayed (a grader's verdict) keeps the id it was shown with."""
    return f"notice-{hashlib.sha256(text.encode()).hexdigest()[:24]}"


def thought_id(message_id: str | None) -> str | None:
    """The id of a message's reasoning: a message of its own, so a client never folds it
    into the reply."""
    return None if message_id is None else f"{message_id}-thought"


@dataclass(frozen=True, slots=True)
class ToolStarted:
    """A tool call the model made, announced before it runs (or is approved)."""

    tool_call_id: str
    name: str
    kind: ToolKind
    title: str
    args: dict
    locations: tuple[Location, ...] = ()
    diff: FileDiff | None = None
    """The change an edit, write or delete proposes, computed without touching the file
    (None when it cannot be known: say the file is missing or old_string is not in it)."""


@dataclass(frozen=True, slots=True)
class ToolRunning:
    tool_call_id: str


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """Output a running tool produced (a shell command's stdout/stderr)."""

    tool_call_id: str
    text: str


@dataclass(frozen=True, slots=True)
class ToolTerminal:
    """A tool's command runs in the editor's terminal `terminal_id` (shown live there)."""

    tool_call_id: str
    terminal_id: str


@dataclass(frozen=True, slots=True)
class ToolFinished:
    tool_call_id: str
    status: ToolStatus
    text: str
    diff: FileDiff | None = None
    locations: tuple[Location, ...] = ()


@dataclass(frozen=True, slots=True)
class PlanEntry:
    content: str
    status: PlanStatus
    priority: Literal["high", "medium", "low"] = "medium"


PLAN_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}
"""How a plan entry's status reads in plain text (terminals, the demo)."""
GOAL_ENTRY = "Goal: "
"""How the goal's plan entry starts (it ends with the grader's latest verdict)."""


@dataclass(frozen=True, slots=True)
class PlanUpdated:
    entries: tuple[PlanEntry, ...]


@dataclass(frozen=True, slots=True)
class Cost:
    amount: float
    currency: str


@dataclass(frozen=True, slots=True)
class UsageUpdated:
    used: int
    """Tokens in the context after the last model call."""
    size: int
    """The model's context window (a fallback when the model does not say)."""
    cost: Cost | None = None
    """The conversation's cost so far, when the user configured the model's prices."""


@dataclass(frozen=True, slots=True)
class TitleChanged:
    """The session's title, for the client's list (empty: cleared)."""

    title: str


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the user should know that is not the agent's answer (a server that failed)."""

    text: str
    severity: NoticeSeverity = "info"
    title: str = ""
    """A short line that stands alone (empty: the text's first clause)."""


@dataclass(frozen=True, slots=True)
class Compaction:
    """The conversation is being summarized to free context (`/compact`, or automatically):
    started (`in_progress`), then `completed` with the summary, `failed` with why, or
    `cancelled`."""

    compaction_id: str
    status: CompactionStatus
    summary: str = ""
    error: str = ""


@dataclass(frozen=True, slots=True)
class SubagentStep:
    """A tool call a sub-agent made under the `task` card `tool_call_id`, as it starts
    and as it ends (`step_id`: the sub-agent's own id for the call)."""

    tool_call_id: str
    step_id: str
    name: str
    """The tool the sub-agent called."""
    title: str
    kind: ToolKind
    status: StepStatus


@dataclass(frozen=True, slots=True)
class ModeChanged:
    """The session's mode is now `mode` (the user chose it, or plan mode was left)."""

    mode: str


@dataclass(frozen=True, slots=True)
class ModelChanged:
    """The session's model is now the spec `model` (`provider:name`)."""

    model: str


@dataclass(frozen=True, slots=True)
class EffortChanged:
    """How hard the model thinks is now `effort`: off, low, medium or high."""

    effort: str


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    description: str
    hint: str | None = None
    """What to type after the command, for commands that take input."""


@dataclass(frozen=True, slots=True)
class CommandsChanged:
    """The slash commands on offer (at the session's start, and when skills change)."""

    commands: tuple[Command, ...]


Event = (
    UserMessage
    | MessageChunk
    | ThoughtChunk
    | ToolStarted
    | ToolRunning
    | ToolOutput
    | ToolTerminal
    | ToolFinished
    | PlanUpdated
    | UsageUpdated
    | TitleChanged
    | Notice
    | Compaction
    | SubagentStep
    | ModeChanged
    | ModelChanged
    | EffortChanged
    | CommandsChanged
)

PermissionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]


@dataclass(frozen=True, slots=True)
class Question:
    """The agent asks the user (the ask_user tool)."""

    tool_call_id: str
    question: str
    choices: tuple[str, ...] = ()


ASK_IN_CHAT = "ask-in-chat"
"""A face's answer to a Question it cannot ask now: end the turn with the question."""


@dataclass(frozen=True, slots=True)
class PermissionRequest:
    """A gated tool call waiting for the user; answered with one of `options` or None
    (cancelled). It repeats what the call's card shows, so the prompt can show it too."""

    tool_call_id: str
    title: str
    options: tuple[PermissionKind, ...] = field(default=())
    kind: ToolKind = "other"
    diff: FileDiff | None = None
    locations: tuple[Location, ...] = ()
    outside_sandbox: bool = False
    """A command asks to run outside the sandbox: only the user answers that, never a
    setting that answers for them (the LSP face's `shell = "allow"`)."""
