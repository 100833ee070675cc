"""GoalMiddleware: before the agent ends its turn, a grader checks the work against a goal.

When the model answers without tool calls and a goal is set, a grader sub-agent reads a
bounded view of the transcript, may inspect the workspace (read tools, and commands
through the same approval gate as the agent's), and ends its answer with a JSON verdict:
`satisfied`, `needs_revision` (with feedback) or `failed`. Needs revision sends the
feedback back to the agent as a message and the loop continues, at most `rounds` gradings
per turn. An answer that is not a verdict counts as `failed`. Each grading and verdict is
written to the stream as a `GoalSignal` for the session to show.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime

from deepacp.config import DEFAULT_GOAL_ROUNDS
from deepacp.harness.contracts import GRADER_SOURCE, GoalSignal, GoalStatus
from deepacp.harness.delegation import current_task_call
from deepacp.harness.middleware.subagents import child_input, final_report, stream_child
from deepacp.harness.middleware.summarization import transcript
from deepacp.harness.middleware.truncation import LIMIT_STOPS, stop_of
from deepacp.harness.usage import USAGE_KEY

TRANSCRIPT_MESSAGES = 30
"""The grader sees at most the last 30 messages of the thread..."""
TRANSCRIPT_MESSAGE_CHARS = 1_200
"""...each message's text cut to 1,200 characters, and each tool-call argument to
`ARGUMENT_CHARS`..."""
ARGUMENT_CHARS = 300
TRANSCRIPT_CHARS = 40_000
"""...and the whole view to 40,000 characters (the oldest part goes first)."""
VERDICTS: tuple[GoalStatus, ...] = ("satisfied", "needs_revision", "failed")

GRADER_PROMPT = """\
You are the grader: you check another agent's work against a goal the user set. Look at \
the workspace with your tools — read the files, run the checks the goal names (tests, \
linters) — instead of trusting what the agent says it did. You cannot change files. \
Finish with a JSON object on its own line: {"verdict": "satisfied" | "needs_revision" | \
"failed", "feedback": "..."}. satisfied: every part of the goal holds and you checked it. \
needs_revision: say what is missing or wrong, specifically enough to act on. failed: the \
goal cannot be met in this workspace, or needs the user."""

GoalSource = Callable[[], str | None]
"""Reads the goal in force now (None or empty: no goal)."""


class VerdictError(ValueError):
    """The grader's answer holds no verdict."""


@dataclass(frozen=True, slots=True)
class Verdict:
    status: GoalStatus
    feedback: str = ""


def parse_verdict(text: str) -> Verdict:
    """The last JSON object in `text` with a known `verdict` (prose or a code fence around
    it is fine); `VerdictError` when there is none."""
    decoder = json.JSONDecoder()
    start = text.rfind("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict) and "verdict" in value:
            status = str(value["verdict"]).strip().lower().replace(" ", "_").replace("-", "_")
            feedback = value.get("feedback", "")
            if status not in VERDICTS:
                raise VerdictError(f"unknown verdict {value['verdict']!r}")
            text = feedback if isinstance(feedback, str) else json.dumps(feedback)
            return Verdict(status, text)
        start = text.rfind("{", 0, start)
    shown = " ".join(text.split())[:120]
    raise VerdictError(f"the grader's answer was not a verdict: {shown!r}")


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]} … [{len(text) - limit} clipped]"


def _clipped_calls(message: AIMessage) -> AIMessage:
    calls = [
        {**c, "args": {k: _clip(str(v), ARGUMENT_CHARS) for k, v in c["args"].items()}}
        for c in message.tool_calls
    ]
    return message.model_copy(update={"tool_calls": calls})


def transcript_view(messages: Sequence[AnyMessage]) -> str:
    """The thread as the grader sees it, within the limits above."""
    kept = list(messages[-TRANSCRIPT_MESSAGES:])
    view = [_clipped_calls(m) if isinstance(m, AIMessage) else m for m in kept]
    text = transcript(view, TRANSCRIPT_MESSAGE_CHARS)
    left_out = len(messages) - len(kept)
    if len(text) > TRANSCRIPT_CHARS:
        text = "… [earlier part clipped]\n" + text[-TRANSCRIPT_CHARS:]
    if left_out:
        text = f"({left_out} earlier messages left out)\n\n{text}"
    return text


def grader_brief(goal: str, messages: Sequence[AnyMessage]) -> str:
    return (
        f"The goal:\n<goal>\n{goal}\n</goal>\n\n"
        f"The conversation so far (the agent now says it is done):\n"
        f"<transcript>\n{transcript_view(messages)}\n</transcript>\n\n"
        "Check the work in the workspace against the goal, then give your verdict."
    )


def is_feedback(message: Any) -> bool:
    """Whether `message` is a grader's feedback sent back to the agent."""
    extra = getattr(message, "additional_kwargs", None) or {}
    return isinstance(message, HumanMessage) and extra.get("lc_source") == GRADER_SOURCE


def rounds_done(messages: Sequence[AnyMessage]) -> int:
    """Gradings that sent the agent back to work since the user's last message."""
    done = 0
    for message in reversed(messages):
        if is_feedback(message):
            done += 1
        elif isinstance(message, HumanMessage):
            break
    return done


def feedback_message(goal: str, feedback: str, round_: int, rounds: int) -> HumanMessage:
    text = (
        f"A grader checked your work against the goal (round {round_} of {rounds}) and it "
        f"needs revision:\n{feedback or '(no details given)'}\n\n"
        f"Keep working until this holds: {goal}"
    )
    return HumanMessage(text, additional_kwargs={"lc_source": GRADER_SOURCE})


def verdict_text(status: GoalStatus, feedback: str, round_: int, rounds: int) -> str:
    """What the user is told of a verdict, in one short message."""
    detail = f": {feedback}" if feedback else ""
    if status == "satisfied":
        return f"Goal met (grader, round {round_} of {rounds}){detail}"
    if status == "needs_revision" and round_ < rounds:
        return f"Goal needs revision (round {round_} of {rounds}){detail}"
    if status == "needs_revision":
        return f"Goal not met after {rounds} rounds; the last review{detail}"
    return f"Goal not met (round {round_} of {rounds}){detail}"


class GoalMiddleware(AgentMiddleware):
    """Grades the agent's work before its turn ends (see the module docstring)."""

    def __init__(self, grader: Any, goal: GoalSource, rounds: int = DEFAULT_GOAL_ROUNDS) -> None:
        """`grader`: the compiled grader graph; `goal`: read at each check, so a session
        can change it between turns."""
        super().__init__()
        self.grader = grader
        self.goal = goal
        self.rounds = rounds

    @hook_config(can_jump_to=["model"])
    async def aafter_model(self, state: AgentState, runtime: Runtime) -> dict[str, Any] | None:
        goal = (self.goal() or "").strip()
        messages = state["messages"]
        last = messages[-1] if messages else None
        if not goal or not isinstance(last, AIMessage) or last.tool_calls:
            return None
        if stop_of(last) in LIMIT_STOPS or stop_of(last) in ("refusal", "content_filter"):
            return None  # the turn ends for that reason; there is no finished work to grade
        round_ = rounds_done(messages) + 1
        check = GoalCheck(f"goal-{last.id or len(messages)}", goal, round_, self.rounds, runtime)
        check.tell("checking", f"Checking the goal (round {round_} of {self.rounds})")
        verdict, used = await self._grade(check, state)
        check.tell(verdict.status, verdict_text(verdict.status, verdict.feedback, *check.count))
        update: dict[str, Any] = {USAGE_KEY: used} if used else {}
        if verdict.status == "needs_revision" and round_ < self.rounds:
            update["messages"] = [feedback_message(goal, verdict.feedback, *check.count)]
            update["jump_to"] = "model"
        return update or None

    async def _grade(self, check: GoalCheck, state: AgentState) -> tuple[Verdict, Any]:
        brief = grader_brief(check.goal, state["messages"])
        token = current_task_call.set(check.id)  # its approvals are asked on the check's card
        try:
            final = await stream_child(
                self.grader, child_input(state, brief), check.id, check.write
            )
        except GraphBubbleUp:
            raise  # an approval inside the grader: the turn pauses and resumes it
        except Exception as exc:
            return Verdict("failed", f"the grader stopped with an error: {exc}"[:300]), None
        finally:
            current_task_call.reset(token)
        try:
            verdict = parse_verdict(final_report(final))
        except VerdictError as exc:
            verdict = Verdict("failed", str(exc))
        return verdict, final.get(USAGE_KEY)


@dataclass
class GoalCheck:
    """One grading: its card id, and how it reports to the stream."""

    id: str
    goal: str
    round: int
    rounds: int
    runtime: Runtime

    @property
    def count(self) -> tuple[int, int]:
        return self.round, self.rounds

    def write(self, signal: Any) -> None:
        self.runtime.stream_writer(signal)

    def tell(self, status: GoalStatus, text: str) -> None:
        self.write(GoalSignal(self.id, status, self.goal, text, self.round, self.rounds))
