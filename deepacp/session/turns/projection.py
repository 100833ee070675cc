"""LangGraph output -> protocol-neutral events: one projection for live turns and replay
(the tool cards themselves are made in `cards.py`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.types import Command

from deepacp.backends.protocol import Backend
from deepacp.events import (
    GOAL_ENTRY,
    Compaction,
    Event,
    MessageChunk,
    Notice,
    PlanEntry,
    PlanStatus,
    PlanUpdated,
    StopReason,
    SubagentStep,
    ThoughtChunk,
    ToolFinished,
    ToolOutput,
    ToolRunning,
    ToolStarted,
    ToolStatus,
    ToolTerminal,
    UsageUpdated,
    UserMessage,
    thought_id,
)
from deepacp.harness import (
    BACKGROUND_KEY,
    LIMIT_STOPS,
    GoalSignal,
    ModelRetrySignal,
    NoticeSignal,
    SubagentStepSignal,
    TaskRecord,
    TaskStatus,
    TokenUsage,
    is_feedback,
    is_note,
    merge_tasks,
    shown_status,
    stop_of,
    text_of,
)
from deepacp.session.turns.cards import call_events, clipped, describe_call, tool_finished
from deepacp.session.turns.message_ids import StreamIds

DEFAULT_CONTEXT_WINDOW = 200_000
GOAL_NOTICE = "Goal check"
GOAL_CARD = "goal"
"""The name on the card of a goal check (it is no tool the model called)."""
GOAL_PLAN_CHARS = 80
_GOAL_PLAN: dict[str, tuple[PlanStatus, str]] = {
    "checking": ("in_progress", "checking"),
    "needs_revision": ("in_progress", "needs revision"),
    "satisfied": ("completed", "met"),
    "failed": ("pending", "not met"),
}
_TASK_PLAN: dict[TaskStatus, PlanStatus] = {
    "running": "in_progress",
    "finished": "completed",
    "cancelled": "completed",
    "failed": "pending",
    "lost": "pending",
}
BACKGROUND_ENTRY = "Background: "
TaskStatusOf = Callable[[str], TaskStatus | None]
"""A background task's status as its runner knows it now (None: not known)."""


def background_entries(
    records: Mapping[str, TaskRecord] | None, status_of: TaskStatusOf
) -> tuple[PlanEntry, ...]:
    """The plan entries of a thread's background tasks, "Background: <brief> (status)"."""
    entries = []
    for record in (records or {}).values():
        status = shown_status(record, status_of)
        brief = clipped(record.get("description"), GOAL_PLAN_CHARS)
        entries.append(PlanEntry(f"{BACKGROUND_ENTRY}{brief} ({status})", _TASK_PLAN[status]))
    return tuple(entries)


def unknown_status(task_id: str) -> TaskStatus | None:
    return None


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
    reason = stop_of(message)
    if reason in LIMIT_STOPS:
        return "max_tokens"
    if reason in ("refusal", "content_filter"):
        return "refusal"
    return "end_turn"


def usage(message: AIMessage, window: int | None) -> UsageUpdated | None:
    """The context in use after a model call: all its input (cached or not) and output."""
    if not message.usage_metadata:
        return None
    used = TokenUsage.of_call(message.usage_metadata)
    return UsageUpdated(used=used.total, size=window or DEFAULT_CONTEXT_WINDOW)


def replay(messages: list[AnyMessage], backend: Backend) -> Iterator[Event]:
    """The events a client needs to redraw a thread's history."""
    names: dict[str, str] = {}
    for message in messages:
        if is_feedback(message):
            yield Notice(text_of(message.content), title=GOAL_NOTICE)  # a grader's verdict
        elif isinstance(message, HumanMessage):
            if not is_note(message):  # deepacp's notes to the model are not the user's words
                yield UserMessage(human_text(message), message.id)
        elif isinstance(message, AIMessage):
            text, thought = text_and_thought(message)
            if thought:
                yield ThoughtChunk(thought, thought_id(message.id))
            if text:
                yield MessageChunk(text, message.id)
            for call in message.tool_calls:
                names[call["id"] or ""] = call["name"]
                yield from call_events(call, backend)
        elif isinstance(message, ToolMessage):
            yield tool_finished(message, names.get(message.tool_call_id))


class LiveProjection:
    """Turns one turn's `astream` output into events, announcing and finishing each tool
    call exactly once (resumed runs re-emit updates LangGraph already reported)."""

    def __init__(
        self, backend: Backend, window: int | None, task_status: TaskStatusOf = unknown_status
    ) -> None:
        self.backend = backend
        self.window = window
        self.task_status = task_status
        self.announced: dict[str, str] = {}
        """The tool calls announced so far, by id: the tool each one calls."""
        self.finished: set[str] = set()
        self.started: dict[str, ToolStarted] = {}
        """The cards as announced (with their proposed diffs), for the approval prompts."""
        self.interrupts: list[Any] = []
        self.last_ai: AIMessage | None = None
        self.usage = TokenUsage()
        """Usage of the turn's model calls so far (the agent's own, not its sub-agents')."""
        self.todos: tuple[PlanEntry, ...] = ()
        """The agent's task list as last shown (the goal's and background tasks' entries
        go after it)."""
        self.goal_entry: PlanEntry | None = None
        self.tasks: dict[str, TaskRecord] = {}
        """The thread's background tasks as last seen."""
        self.steps: dict[str, SubagentStep] = {}
        """Sub-agents' tool calls as last shown, by their own ids."""
        self.ids = StreamIds()

    def feed(self, namespace: tuple, mode: str, data: Any) -> list[Event]:
        if mode == "custom" and isinstance(data, ModelRetrySignal):
            # a sub-agent's wait is the user's wait too
            return [Notice(data.text, "warning", "Retrying the model provider")]
        if mode == "custom" and isinstance(data, NoticeSignal):
            return [Notice(data.notice, "warning")]  # so is what a sub-agent's command left
        if namespace:
            return []  # sub-agent internals stay inside their parent's card
        if mode == "messages":
            chunk, meta = data
            if meta.get("langgraph_node") != "model" or not isinstance(chunk, AIMessage):
                return []  # only the model's words: not the answers or notes its step adds
            text, thought = text_and_thought(chunk)
            message_id = self.ids.of(chunk.id, meta)
            events: list[Event] = []
            if thought:
                events.append(ThoughtChunk(thought, thought_id(message_id)))
            if text:
                events.append(MessageChunk(text, message_id))
            return events
        if mode == "tools":
            if data.get("event") == "tool-started" and data["tool_call_id"] in self.announced:
                return [ToolRunning(data["tool_call_id"])]
            return []
        if mode == "custom":
            if isinstance(data, ToolOutput | ToolTerminal):  # the tool wrote the event itself
                return [data]
            if isinstance(data, GoalSignal):
                return self._goal(data)
            if isinstance(data, Compaction):
                return [data]
            if isinstance(data, SubagentStepSignal):
                return [self._step(data)]
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
            if changed := background_of(update):
                self.tasks = merge_tasks(self.tasks, changed)
                events.append(PlanUpdated(self._plan()))
            for message in messages_of(update):
                if isinstance(message, AIMessage) and node == "model":
                    self.last_ai = message
                    self.usage = self.usage + TokenUsage.of_call(message.usage_metadata)
                    if usage_event := usage(message, self.window):
                        events.append(usage_event)
                    for call in message.tool_calls:
                        if (call_id := call["id"] or "") not in self.announced:
                            self.announced[call_id] = call["name"]
                            events.extend(map(self._with_goal, call_events(call, self.backend)))
                elif (
                    isinstance(message, ToolMessage)
                    and node in ("tools", "model")  # the model step answers cut-off calls
                    and message.tool_call_id in self.announced
                    and message.tool_call_id not in self.finished
                ):
                    self.finished.add(message.tool_call_id)
                    events.append(tool_finished(message, self.announced[message.tool_call_id]))
        return events

    def _step(self, signal: SubagentStepSignal) -> SubagentStep:
        """A sub-agent's tool call, titled as the parent's own cards are."""
        known = self.steps.get(signal.call_id)
        if known is None:
            kind, title, _ = describe_call(signal.name, signal.args, self.backend)
            known = SubagentStep(
                signal.card_id, signal.call_id, signal.name, title, kind, signal.status
            )
        self.steps[signal.call_id] = step = dataclasses.replace(known, status=signal.status)
        return step

    def _with_goal(self, event: Event) -> Event:
        """A new task list, with the goal's entry kept after it."""
        if not isinstance(event, PlanUpdated):
            return event
        self.todos = event.entries
        return PlanUpdated(self._plan())

    def _plan(self) -> tuple[PlanEntry, ...]:
        goal = (self.goal_entry,) if self.goal_entry else ()
        return (*self.todos, *goal, *background_entries(self.tasks, self.task_status))

    def _goal(self, signal: GoalSignal) -> list[Event]:
        """A goal check's card (its approvals are asked there), plan entry and verdict."""
        out_of_rounds = signal.status == "needs_revision" and signal.round >= signal.rounds
        status, label = _GOAL_PLAN["failed" if out_of_rounds else signal.status]
        if signal.status == "checking" or (signal.status == "needs_revision" and not out_of_rounds):
            label = f"{label}, round {signal.round} of {signal.rounds}"
        goal = " ".join(signal.goal.split())
        if len(goal) > GOAL_PLAN_CHARS:
            goal = goal[: GOAL_PLAN_CHARS - 1] + "…"
        self.goal_entry = PlanEntry(f"{GOAL_ENTRY}{goal} ({label})", status, "high")
        plan = PlanUpdated(self._plan())
        if signal.status == "checking":
            if signal.check_id in self.announced:
                return []  # the check resumed after an approval
            self.announced[signal.check_id] = GOAL_CARD
            card = ToolStarted(signal.check_id, GOAL_CARD, "think", signal.text, {"goal": goal})
            return [card, plan]
        if signal.check_id in self.finished:
            return []
        self.finished.add(signal.check_id)
        outcome: ToolStatus = "failed" if signal.status == "failed" else "completed"
        verdict = Notice(signal.text, title=GOAL_NOTICE)
        return [ToolFinished(signal.check_id, outcome, signal.text), plan, verdict]


def background_of(update: Any) -> dict[str, TaskRecord]:
    """The background-task records a node's update changes (merged, for a list of them)."""
    if isinstance(update, list | tuple):
        merged: dict[str, TaskRecord] = {}
        for item in update:
            merged = merge_tasks(merged, background_of(item))
        return merged
    payload = update.update if isinstance(update, Command) else update
    found = payload.get(BACKGROUND_KEY) if isinstance(payload, dict) else None
    return dict(found) if isinstance(found, dict) else {}


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
