"""What the harness hands the session runtime, typed once for both sides: the progress a
tool writes to the stream (as the very events the faces show: `deepacp.events.ToolOutput`,
`ToolTerminal`), the artifact a file change leaves on its result, the interrupts a run
stops on, and what hooks decide about a tool call. Light to import (no LangChain).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol

from deepacp.events import Compaction, StepStatus, ToolOutput, ToolTerminal


@dataclass(frozen=True, slots=True)
class NoticeSignal:
    """Something the user must be told now, from wherever in the run it happened (a
    sub-agent's tool too): a command left what the sandbox's guard could not undo."""

    notice: str


@dataclass(frozen=True, slots=True)
class ModelRetrySignal:
    """A model call failed for a passing reason and is tried again after `delay` seconds."""

    reason: str
    """What the provider said, briefly: "overloaded", "rate limited", "failing"..."""
    delay: float
    attempt: int
    """The try about to start (2 for the first retry)."""
    attempts: int

    @property
    def text(self) -> str:
        # whole seconds, or tenths (rounded up) for the short waits of tests and retry-after
        wait = f"{self.delay:.0f}" if self.delay >= 1 else f"{math.ceil(self.delay * 10) / 10:.1f}"
        return f"provider {self.reason}, retrying in {wait} s, {self.attempt}/{self.attempts}"


@dataclass(frozen=True, slots=True)
class SubagentStepSignal:
    """A sub-agent's tool call `call_id` started or ended, under the parent's `task` call
    `card_id` (the session titles it as it titles the parent's own cards)."""

    card_id: str
    call_id: str
    name: str
    args: dict[str, Any]
    status: StepStatus


GoalStatus = Literal["checking", "satisfied", "needs_revision", "failed"]

GRADER_SOURCE = "goal_grader"
"""`additional_kwargs["lc_source"]` of the message that sends a grader's feedback back."""


@dataclass(frozen=True, slots=True)
class GoalSignal:
    """The goal grader started on a turn's work (`checking`) or gave its verdict."""

    check_id: str
    """Stable for one grading (it names the grading's card)."""
    status: GoalStatus
    goal: str
    text: str
    """What the user is told: the verdict and the grader's feedback."""
    round: int
    rounds: int


def signal_from_json(value: Any) -> Any:
    """A signal as a server streamed it (its fields, as a dict), as the signal it was;
    anything else as it is."""
    if not isinstance(value, dict):
        return value
    kinds = (ToolOutput, ToolTerminal, ModelRetrySignal, NoticeSignal, Compaction)
    for kind in (*kinds, SubagentStepSignal):
        if set(value) == set(kind.__slots__):
            return kind(**value)
    return value


@dataclass(frozen=True, slots=True)
class EditArtifact:
    """A file change, whole file before and after, on the change's tool result. Stored in
    the checkpoint as plain JSON (`as_json`), so sessions saved by any version load."""

    path: str
    """The workspace path."""
    abs_path: str | None
    """The path on disk (None for files that live elsewhere: state, store)."""
    old_text: str | None
    """None: the file did not exist."""
    new_text: str | None
    """None: the file was deleted."""

    @property
    def shown_path(self) -> str:
        return self.abs_path or self.path

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, value: Any) -> EditArtifact | None:
        """The artifact a tool result carries, or None when it carries none (or another)."""
        if not isinstance(value, dict) or "new_text" not in value or "path" not in value:
            return None
        return cls(
            str(value["path"]), value.get("abs_path"), value.get("old_text"), value["new_text"]
        )


ASK_USER = "ask_user"


@dataclass(frozen=True, slots=True)
class QuestionInterrupt:
    """The ask_user tool waits for the user's answer."""

    tool_call_id: str
    question: str
    choices: tuple[str, ...] = ()

    def as_value(self) -> dict[str, Any]:
        return {
            "type": ASK_USER,
            "tool_call_id": self.tool_call_id,
            "question": self.question,
            "choices": list(self.choices),
        }


@dataclass(frozen=True, slots=True)
class ApprovalInterrupt:
    """A gated tool call waits for the user's yes (LangChain's approval middleware, one
    interrupt per call)."""

    tool_call_id: str
    name: str
    args: dict[str, Any] = field(default_factory=dict)


Interrupt = QuestionInterrupt | ApprovalInterrupt


def parse_interrupt(value: Any) -> Interrupt:
    """The typed form of an interrupt's value (ValueError for one we never raise)."""
    if not isinstance(value, dict) or not isinstance(value.get("tool_call_id"), str):
        raise ValueError(f"not an interrupt deepacp raises: {value!r}"[:200])
    if value.get("type") == ASK_USER:
        choices = tuple(str(c) for c in value.get("choices") or ())
        return QuestionInterrupt(value["tool_call_id"], str(value.get("question", "")), choices)
    return ApprovalInterrupt(value["tool_call_id"], str(value["name"]), value.get("args") or {})


@dataclass(frozen=True)
class HookDecision:
    """What blocking hooks said: go on (with `args` rewritten, when given) or not, and why."""

    allow: bool = True
    reason: str = ""
    args: dict[str, Any] | None = None


ALLOW = HookDecision()


class HookRunner(Protocol):
    """Runs the hooks of `event` with `fields` as their payload. Blocking events wait for
    the decision; the others return `ALLOW` at once and run in the background."""

    async def __call__(self, event: str, fields: dict[str, Any], /) -> HookDecision: ...
