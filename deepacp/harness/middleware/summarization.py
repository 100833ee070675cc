"""SummarizationMiddleware: keep long threads inside the context window, losing nothing.
Over 350 lines because the view, the summary and its retry are one invariant, read whole.

The state keeps every message. When the model's view of the thread nears the window
(85%; a fixed budget when the model does not say), the middleware first clips large
arguments of old write_file/edit_file calls in the view; if that is not enough it writes
the oldest span to `/conversation_history/<thread>.md`, asks the model for a summary, and
records an event {cutoff, summary, file_path} in private state. Every later call sees
`[summary] + messages[cutoff:]`. A provider context-overflow error (`context_overflow`)
triggers one retry with a strictly smaller view. Each summary is reported as it starts
and as it ends (a `deepacp.events.Compaction`: on the run's `custom` stream, or to the
caller of `compact`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, NotRequired, TypedDict, cast

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
)
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import count_tokens_approximately
from langgraph.constants import TAG_NOSTREAM
from langgraph.types import Command

from deepacp.backends.errors import BackendError, NotFoundError
from deepacp.backends.protocol import Backend
from deepacp.backends.state import state_scope
from deepacp.errors import ProviderError
from deepacp.harness.compaction import Report, reported, stream_report, unreported
from deepacp.harness.messages import text_of
from deepacp.harness.names import EDIT_FILE, HISTORY_DIR, WRITE_FILE
from deepacp.harness.overflow import context_overflow, overflow_line
from deepacp.harness.state import state_files
from deepacp.secrets import redact

TRIGGER_FRACTION = 0.85
KEEP_FRACTION = 0.10
FALLBACK_WINDOW = 200_000
CLIP_ARG_CHARS = 2_000
TRANSCRIPT_MESSAGE_CHARS = 4_000

SUMMARY_PROMPT = """\
Summarize the conversation below so that you can continue the work from the summary alone.
Keep: the user's goals and constraints, decisions made, files read or changed (with paths),
commands run and their outcomes, open problems, and the next steps. Be specific and brief."""


class SummaryEvent(TypedDict):
    cutoff: int
    """Index into the state's messages: the view keeps messages[cutoff:]."""
    summary: str
    file_path: str


class SummarizationState(AgentState):
    _summarization: NotRequired[Annotated[SummaryEvent | None, PrivateStateAttr]]


class ContextTooLargeError(ProviderError):
    """Even after summarizing, the request does not fit the model's context window."""


def summary_message(event: SummaryEvent) -> HumanMessage:
    return HumanMessage(
        "<conversation_summary>\n"
        f"{event['summary']}\n"
        "</conversation_summary>\n"
        f"Earlier messages were summarized to save space; the full text is in "
        f"{event['file_path']} (read_file or grep it when you need a detail)."
    )


def render(messages: Sequence[AnyMessage], event: SummaryEvent | None) -> list[AnyMessage]:
    """The model's view of the thread."""
    if not event:
        return list(messages)
    return [summary_message(event), *messages[event["cutoff"] :]]


def tokens(messages: Sequence[AnyMessage], system: SystemMessage | None, tools: Sequence) -> int:
    counted = [system, *messages] if system is not None else list(messages)
    return count_tokens_approximately(counted, tools=list(tools) or None)


class TokenCount:
    """`tokens()`, with each message counted once while it stays in the views counted.

    The approximate count is a sum of per-message counts (each rounded on its own), so a
    long thread's view costs a lookup per message at each model call instead of a new
    count of every message's text. Messages are known by identity (held, so an id is never
    reused while known): a message replaced, or loaded again from a checkpoint, is counted
    afresh. Messages are not changed in place; a copy is a new message."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[AnyMessage, int]] = {}

    def __call__(
        self, messages: Sequence[AnyMessage], system: SystemMessage | None, tools: Sequence
    ) -> int:
        total = tokens([], system, tools)
        known, kept = self._known, {}
        for message in messages:
            hit = known.get(id(message))
            if hit is None or hit[0] is not message:
                hit = (message, count_tokens_approximately([message]))
            kept[id(message)] = hit
            total += hit[1]
        self._known = kept  # only the last view's messages: nothing older is held
        return total


def clip_old_arguments(view: list[AnyMessage], keep_from: int) -> list[AnyMessage]:
    """Copies of AI messages before `keep_from` with huge write/edit arguments clipped
    (the files themselves hold that text)."""
    out = list(view)
    for index, message in enumerate(view[:keep_from]):
        if not isinstance(message, AIMessage) or not message.tool_calls:
            continue
        calls, changed = [], False
        for call in message.tool_calls:
            if call["name"] in (WRITE_FILE, EDIT_FILE):
                args = {}
                for key, value in call["args"].items():
                    if isinstance(value, str) and len(value) > CLIP_ARG_CHARS:
                        value = f"{value[:200]}… [{len(value) - 200} characters clipped]"
                        changed = True
                    args[key] = value
                call = {**call, "args": args}
            calls.append(call)
        if changed:
            out[index] = message.model_copy(update={"tool_calls": calls})
    return out


def safe_cutoff(messages: Sequence[AnyMessage], keep_tokens: int, floor: int) -> int | None:
    """Where the kept tail starts: about `keep_tokens` of recent messages (the last one
    always), never between an AI message and its tool results, strictly after `floor`."""
    count = len(messages)
    cutoff, kept = count, 0
    while cutoff - 1 > floor:
        cost = count_tokens_approximately([messages[cutoff - 1]])
        if cutoff < count and kept + cost > keep_tokens:
            break
        kept += cost
        cutoff -= 1
    start = cutoff
    while floor < start < count and isinstance(messages[start], ToolMessage):
        start -= 1  # keep tool results with the call that asked for them
    if start <= floor:
        start = cutoff
        while start < count and isinstance(messages[start], ToolMessage):
            start += 1
    return start if floor < start < count else None


def transcript(messages: Sequence[AnyMessage], chars: int = TRANSCRIPT_MESSAGE_CHARS) -> str:
    """Messages as plain text, each cut to `chars`: for the history file, the summary
    request and the goal grader."""
    lines = []
    for message in messages:
        text = text_of(message.content)
        if len(text) > chars:
            text = text[:chars] + " … [clipped]"
        if isinstance(message, AIMessage):
            calls = "".join(f"\n  -> {c['name']}({c['args']})" for c in message.tool_calls)
            lines.append(f"## assistant\n{text}{calls}")
        elif isinstance(message, ToolMessage):
            lines.append(f"## tool result ({message.name or message.tool_call_id})\n{text}")
        else:
            lines.append(f"## {message.type}\n{text}")
    return "\n\n".join(lines)


def _thread_id() -> str:
    try:
        from langgraph.config import get_config

        return str(get_config().get("configurable", {}).get("thread_id") or "thread")
    except RuntimeError:
        return "thread"


class SummarizationMiddleware(AgentMiddleware):
    """Non-destructive summarization (see the module docstring)."""

    state_schema = SummarizationState

    def __init__(
        self,
        backend: Backend,
        *,
        fallback_window: int = FALLBACK_WINDOW,
        before_compact: Callable[[str], Awaitable[Any]] | None = None,
    ) -> None:
        super().__init__()
        self.backend = backend
        self.fallback_window = fallback_window
        self.before_compact = before_compact
        """Told "auto" or "manual" before a summary is attempted (the `pre_compact` hooks)."""
        self._tokens = TokenCount()

    async def _compacting(self, trigger: str) -> None:
        if self.before_compact is not None:
            await self.before_compact(trigger)

    def _window(self, model: Any) -> int:
        profile = getattr(model, "profile", None) or {}
        return int(profile.get("max_input_tokens") or self.fallback_window)

    async def summarize(
        self,
        model: Any,
        messages: Sequence[AnyMessage],
        event: SummaryEvent | None,
        *,
        keep_tokens: int,
        thread_id: str,
        report: Report | None = None,
    ) -> SummaryEvent | None:
        """A new event that summarizes more of the thread, or None if nothing more can go
        (`report`: told when the summary starts and how it ends; by default the run's
        stream)."""
        floor = event["cutoff"] if event else 0
        cutoff = safe_cutoff(messages, keep_tokens, floor)
        if cutoff is None:
            return None
        path = await self._history(messages[floor:cutoff], thread_id)
        making = self._summary(model, messages[floor:cutoff], event)
        summary = await reported(report or stream_report(), making)
        return SummaryEvent(cutoff=cutoff, summary=summary, file_path=path)

    async def _history(self, span: Sequence[AnyMessage], thread_id: str) -> str:
        """Append `span` to the thread's history file; its path, or why there is none."""
        path = f"{HISTORY_DIR}{thread_id}.md"
        try:
            try:
                history = await self.backend.read_text(path)
            except NotFoundError:
                history = f"# Conversation history of thread {thread_id}\n"
            await self.backend.write_text(path, f"{history}\n{transcript(span)}\n")
        except BackendError:
            return "(the history file could not be written)"
        return path

    async def _summary(
        self, model: Any, span: Sequence[AnyMessage], event: SummaryEvent | None
    ) -> str:
        previous = f"Summary so far:\n{event['summary']}\n\n" if event else ""
        request = [
            SystemMessage(SUMMARY_PROMPT),
            HumanMessage(f"{previous}Conversation to summarize:\n\n{transcript(span)}"),
        ]
        # Tagged so a run's `messages` stream leaves it out: it is not the agent's answer;
        # redacted here, as nothing else redacts what this call says.
        response = await model.ainvoke(request, config={"tags": [TAG_NOSTREAM]})
        return redact(text_of(response.content).strip()) or "(no summary)"

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse | ExtendedModelResponse:
        messages = request.messages
        event = cast("SummaryEvent | None", request.state.get("_summarization"))
        window = self._window(request.model)
        trigger, keep = int(window * TRIGGER_FRACTION), int(window * KEEP_FRACTION)
        system, tools = request.system_message, request.tools

        async def size(view: list[AnyMessage]) -> int:
            # Off the event loop: the tools' schemas alone take a tenth of a second to
            # count, a long thread's first count far more, and a cancel must be heard.
            return await asyncio.to_thread(self._tokens, view, system, tools)

        view = render(messages, event)
        new_event: SummaryEvent | None = None
        with state_scope(state_files(request.state)) as scope:
            current = await size(view)
            if current >= trigger:
                view = clip_old_arguments(view, max(0, len(view) - 2))
                current = await size(view)
            if current >= trigger:
                await self._compacting("auto")
                new_event = await self.summarize(
                    request.model, messages, event, keep_tokens=keep, thread_id=_thread_id()
                )
                if new_event:
                    view = render(messages, new_event)
            try:
                response = await handler(request.override(messages=view))
            except Exception as exc:
                if not context_overflow(exc):
                    raise
                current = await size(view)
                retry = await self.summarize(
                    request.model,
                    messages,
                    new_event or event,
                    keep_tokens=min(keep, current // 4),
                    thread_id=_thread_id(),
                )
                if retry is None:  # nothing to summarize: the prompt alone does not fit
                    raise ContextTooLargeError(overflow_line(exc, current)) from exc
                smaller = render(messages, retry)
                if await size(smaller) >= current:
                    raise ContextTooLargeError(
                        "the request does not fit the model's context window even after "
                        f"summarizing (about {current} tokens; the last message alone "
                        f"is {count_tokens_approximately(messages[-1:])})"
                    ) from None
                new_event = retry
                response = await handler(request.override(messages=smaller))
        update: dict[str, Any] = {}
        if new_event is not None:
            update["_summarization"] = new_event
        if scope.updates:
            update["files"] = scope.updates
        return ExtendedModelResponse(response, Command(update=update)) if update else response

    async def compact(
        self, graph: Any, config: dict, model: Any, report: Report = unreported
    ) -> bool:
        """Summarize a thread now (the /compact command); False if there was nothing to do."""
        state = await graph.aget_state(config)
        values = state.values
        messages = values.get("messages", [])
        thread_id = str(config.get("configurable", {}).get("thread_id") or "thread")
        keep = int(self._window(model) * KEEP_FRACTION)
        await self._compacting("manual")
        with state_scope(values.get("files")) as scope:
            event = await self.summarize(
                model,
                messages,
                values.get("_summarization"),
                keep_tokens=keep,
                thread_id=thread_id,
                report=report,
            )
        if event is None:
            return False
        update: dict[str, Any] = {"_summarization": event}
        if scope.updates:
            update["files"] = scope.updates
        await graph.aupdate_state(config, update)
        return True
