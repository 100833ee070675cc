"""One turn of a session: stream the graph, show what happens, answer its interrupts and
resume, until the model stops; and, when a turn stops early, the repair that keeps the
thread valid for the next one."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.errors import GraphRecursionError
from langgraph.types import Command

from deepacp.backends.protocol import Backend
from deepacp.config import ModelPrices
from deepacp.errors import DeepacpError, TurnError
from deepacp.events import (
    MessageChunk,
    Question,
    StopReason,
    ToolFinished,
    ToolStarted,
    UsageUpdated,
)
from deepacp.harness import (
    BACKGROUND_KEY,
    USAGE_KEY,
    TokenUsage,
    answer_for,
    dangling_tool_calls,
    read_value,
)
from deepacp.secrets import redact
from deepacp.session.handler import SessionHandler
from deepacp.session.turns import cards, projection
from deepacp.session.turns.ask import ASKED_IN_CHAT
from deepacp.session.turns.control import AskInChat, TurnCancelled
from deepacp.session.turns.interrupts import InterruptResolver
from deepacp.session.turns.redaction import LiveRedactor
from deepacp.session.turns.usage import cost_of

log = logging.getLogger(__name__)

StopHook = Callable[[StopReason, int], Awaitable[str | None]]
"""Asked as the agent ends its turn (and how often it was sent back already): a message
that sends it back to work, or None."""

STREAM_MODES = ["messages", "updates", "custom", "tools"]


def _tools_stream_skips_model_calls() -> None:
    """LangGraph's handler for the `tools` stream has no `on_chat_model_start`, so at each
    model call LangChain renders the whole transcript as text for its `on_llm_start`, which
    ignores it too: a cost that grows with the thread. It only follows tool calls."""
    with contextlib.suppress(ImportError):
        from langgraph.pregel._tools import StreamToolCallHandler

        StreamToolCallHandler.ignore_chat_model = True  # type: ignore[assignment]  # a property on the base


_tools_stream_skips_model_calls()
CANCELLED = "Cancelled by the user before it finished."
FAILED_RUN = "The run stopped with an error before this tool call finished."


def question_text(question: Question) -> str:
    """A question the face cannot ask, as the agent's closing message."""
    if not question.choices:
        return question.question
    options = "\n".join(f"- {choice}" for choice in question.choices)
    return f"{question.question}\n{options}"


def user_message(content: str | list[dict], message_id: str | None = None) -> dict[str, Any]:
    """The graph input (or state update) that adds the user's message to the thread, under
    the prompt's id (what its chunks, restore point and `_session/rewind` name)."""
    blocks: str | list[str | dict] = content if isinstance(content, str) else [*content]
    return {"messages": [HumanMessage(content=blocks, id=message_id)]}


class Turn:
    """Drives `graph` on the thread in `config` for one user message."""

    def __init__(
        self,
        graph: Any,
        config: dict[str, Any],
        backend: Backend,
        handler: SessionHandler,
        resolver: InterruptResolver,
        window: int | None,
        prices: ModelPrices | None = None,
        stop_hook: StopHook | None = None,
        task_status: projection.TaskStatusOf = projection.unknown_status,
    ) -> None:
        self.graph = graph
        self.config = config
        self.backend = backend
        self.handler = handler
        self.resolver = resolver
        self.prices = prices
        self.stop_hook = stop_hook
        self.sent_back = 0
        """How often the stop hook sent the agent back to work this turn."""
        self.live = projection.LiveProjection(backend, window, task_status)
        self.before = TokenUsage()
        """The conversation's usage when the turn started."""
        self.usage = TokenUsage()
        """The turn's usage: every model call, its sub-agents' included, as reported."""

    async def totals(self) -> TokenUsage:
        """The conversation's usage so far, as the thread's state has summed it."""
        return TokenUsage.from_json(
            await read_value(self.graph.checkpointer, self.config, USAGE_KEY)
        )

    async def run(
        self, content: str | list[dict], state: Any = None, message_id: str | None = None
    ) -> StopReason:
        """Why the turn stopped (see `_settled`); `usage` holds what it used. `state`: the
        thread's state as the turn starts, when the caller has read it already;
        `message_id`: the prompt's."""
        if state is None:
            state = await self.graph.aget_state(self.config)
        self.before = TokenUsage.from_json(state.values.get(USAGE_KEY))
        self.live.todos = cards.plan_of(state.values.get("todos")).entries  # the plan shown
        self.live.tasks = dict(state.values.get(BACKGROUND_KEY) or {})
        try:
            return await self._settled(content, message_id)
        finally:
            self.usage = self.live.usage
            with contextlib.suppress(Exception):
                self.usage = await asyncio.shield(self.totals()) - self.before

    async def _settled(self, content: str | list[dict], message_id: str | None) -> StopReason:
        """Why the turn stopped. A turn stopped early is settled first: cancelled
        (`TurnCancelled`), ended on a question for the chat, or failed (`TurnError`; our own
        errors as themselves)."""
        try:
            return await self._stream(content, message_id)
        except (asyncio.CancelledError, TurnCancelled):
            await asyncio.shield(self.settle(CANCELLED))
            raise TurnCancelled from None
        except AskInChat as asked:
            await self.settle(CANCELLED, answers={asked.question.tool_call_id: ASKED_IN_CHAT})
            await self.handler.emit(MessageChunk(question_text(asked.question)))
            return "end_turn"
        except GraphRecursionError:
            await self.settle(FAILED_RUN)
            return "max_turn_requests"
        except DeepacpError:
            await self.settle(FAILED_RUN)
            raise
        except Exception as exc:
            await self.settle(FAILED_RUN)
            log.exception("turn failed on thread %s", self.config)
            raise TurnError(redact(f"the turn failed: {type(exc).__name__}: {exc}")) from exc

    async def _stream(self, content: str | list[dict], message_id: str | None) -> StopReason:
        live = self.live
        payload: Any = user_message(content, message_id)
        redactor = LiveRedactor()  # the one place live events leave for the faces
        while True:
            # Closed however the loop ends: a cancel that lands while an event is shown
            # (the stream waiting at its yield) must still cancel the graph's running
            # tasks, not leave them to finish unseen.
            stream = self.graph.astream(
                payload, self.config, stream_mode=STREAM_MODES, subgraphs=True
            )
            async with contextlib.aclosing(stream):
                async for namespace, mode, data in stream:
                    for event in live.feed(namespace, mode, data):
                        if isinstance(event, ToolStarted):  # the card shows the edit's diff
                            event = await cards.with_proposed_diff(event, self.backend)
                            live.started[event.tool_call_id] = event
                        elif isinstance(event, UsageUpdated) and self.prices is not None:
                            spent = cost_of(self.before + live.usage, self.prices)
                            event = dataclasses.replace(event, cost=spent)
                        for shown in redactor.feed(event):
                            await self.handler.emit(shown)
            for shown in redactor.flush():
                await self.handler.emit(shown)
            if live.interrupts:
                interrupts, live.interrupts = live.interrupts, []
                payload = Command(resume=await self.resolver.resolve(interrupts, live.started))
                continue
            reason = projection.stop_reason(live.last_ai)
            again = await self.stop_hook(reason, self.sent_back) if self.stop_hook else None
            if again is None:
                return reason
            self.sent_back += 1
            payload = {"messages": [HumanMessage(content=again)]}

    async def settle(self, reason: str, answers: dict[str, str] | None = None) -> None:
        """After a cancel or failure: record finished results, answer unfinished calls
        (with `answers` where given, else `reason`), and close every card still open."""
        repaired: list[ToolMessage] = []
        try:
            state = await self.graph.aget_state(self.config)
            finished = {
                m.tool_call_id: m
                for task in state.tasks
                if task.result
                for m in projection.messages_of(task.result)
                if isinstance(m, ToolMessage)
            }
            repaired = list(finished.values())
            for call in dangling_tool_calls(state.values.get("messages", [])):
                if call["id"] in finished:
                    continue
                if call["id"] in (answers or {}):
                    answer = (answers or {})[call["id"]]
                    repaired.append(ToolMessage(answer, tool_call_id=call["id"], name=call["name"]))
                else:
                    repaired.append(answer_for(call, reason))
            if repaired:
                await self.graph.aupdate_state(self.config, {"messages": repaired}, as_node="tools")
        except Exception:
            log.exception("could not repair thread %s after an interrupted turn", self.config)
        live = self.live
        by_id = {m.tool_call_id: m for m in repaired}
        for call_id in sorted(live.announced.keys() - live.finished):
            live.finished.add(call_id)
            message = by_id.get(call_id)
            event = (
                cards.tool_finished(message, live.announced[call_id])
                if message is not None
                else ToolFinished(call_id, "failed", reason)
            )
            with contextlib.suppress(Exception):
                await self.handler.emit(event)
