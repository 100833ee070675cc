"""What `deepacp run` prints, behind one interface the run loop calls (`Output`), and what
every format reports at the end (`RunResult`, from a `Tally` of the turn's events)."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol, TextIO

from deepacp.events import (
    GOAL_ENTRY,
    Event,
    MessageChunk,
    PermissionKind,
    PermissionRequest,
    PlanUpdated,
    Question,
    StopReason,
    ToolFinished,
    ToolStarted,
)

Format = Literal["text", "json", "stream-json"]
FORMATS: tuple[Format, ...] = ("text", "json", "stream-json")


@dataclass(frozen=True)
class RunResult:
    """How a run ended, as `--output-format json` prints it."""

    answer: str
    stop_reason: StopReason | None
    exit_code: int
    session_id: str | None
    usage: dict[str, int] = field(default_factory=dict)
    files_changed: tuple[str, ...] = ()
    error: str | None = None
    """The one line a failed run printed on stderr (None: it did not fail)."""

    def as_json(self) -> dict[str, Any]:
        return {"type": "result", **asdict(self), "files_changed": list(self.files_changed)}


def usage_of(tokens: Any) -> dict[str, int]:
    """A turn's `TokenUsage` under the names scripts expect."""
    return {
        "input_tokens": tokens.input,
        "output_tokens": tokens.output,
        "cache_read_tokens": tokens.cache_read,
        "cache_write_tokens": tokens.cache_write,
        "reasoning_tokens": tokens.reasoning,
        "model_calls": tokens.calls,
    }


def shown_path(path: str, cwd: str) -> str:
    """A changed file's path as people read it: relative to the workspace when inside it."""
    if not os.path.isabs(path):
        return path  # a remote workspace's: relative to its root already
    relative = os.path.relpath(path, cwd)
    return path if relative.startswith("..") else relative


class Tally:
    """What the run reports at its end, gathered from the turn's events: the final answer
    (the text after the last tool call), the files edited, whether the goal was met."""

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.answer: list[str] = []
        self.files: dict[str, None] = {}
        self.goal_met: bool | None = None

    def feed(self, event: Event) -> None:
        if isinstance(event, MessageChunk):
            self.answer.append(event.text)
        elif isinstance(event, ToolStarted):
            self.answer = []
        elif isinstance(event, ToolFinished):
            if event.status == "completed" and event.diff is not None:
                self.files[shown_path(event.diff.path, self.cwd)] = None
        elif isinstance(event, PlanUpdated):
            for entry in event.entries:
                if entry.content.startswith(GOAL_ENTRY):
                    self.goal_met = entry.status == "completed"

    @property
    def final_answer(self) -> str:
        return "".join(self.answer).strip()


class Output(Protocol):
    """One output format. Every call comes from the run loop, in order, on one thread."""

    asks_on: TextIO
    """Where a question to the user and its prompt are written."""

    @property
    def at_line_start(self) -> bool:
        """Nothing half-printed on a line (a status line may be drawn on the terminal)."""
        ...

    def event(self, event: Event) -> None: ...

    def asking(self, request: PermissionRequest | Question) -> None:
        """Show what is about to be asked (an edit's diff first), before the question."""
        ...

    def decided(self, request: PermissionRequest, outcome: PermissionKind, why: str) -> None:
        """A gated call was answered (`why`: said when nobody was asked)."""
        ...

    def finish(self, result: RunResult) -> None: ...
