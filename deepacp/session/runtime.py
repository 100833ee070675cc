"""Session: one agent thread with its mode and approvals, driven turn by turn.

The runtime owns the turn loop (stream, ask for approvals, resume), cancel (stop the
model stream and any running command, keep finished results, answer the rest as
cancelled), and history replay. It speaks no wire protocol: a face gives it a
`SessionHandler` and gets events.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Protocol

from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.errors import GraphRecursionError
from langgraph.types import Command

from deepacp.errors import SessionBusy, TurnError
from deepacp.events import (
    Event,
    PermissionKind,
    PermissionRequest,
    StopReason,
    TitleChanged,
    ToolFinished,
)
from deepacp.harness.middleware.patch_tool_calls import answer_for, dangling_tool_calls
from deepacp.session import projection
from deepacp.session.agent import APPROVAL_DECISIONS, build_session_agent
from deepacp.session.approvals import ApprovalPolicy, Mode, permission_options
from deepacp.session.store import SessionRecord, SessionStore
from deepacp.session.workspace import session_backend

log = logging.getLogger(__name__)

CANCELLED = "Cancelled by the user before it finished."
FAILED_RUN = "The run stopped with an error before this tool call finished."
STREAM_MODES = ["messages", "updates", "custom", "tools"]
RECURSION_LIMIT = 1000
TITLE_CHARS = 60


class SessionHandler(Protocol):
    """What a face provides to a session: somewhere to send events, someone to ask."""

    async def emit(self, event: Event) -> None: ...

    async def ask_permission(self, request: PermissionRequest) -> PermissionKind | None: ...


def title_from(text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first if len(first) <= TITLE_CHARS else first[: TITLE_CHARS - 1].rstrip() + "…"


class Session:
    def __init__(
        self,
        record: SessionRecord,
        store: SessionStore,
        handler: SessionHandler,
        model_factory: Any,
        *,
        planning: bool = True,
    ) -> None:
        self.record = record
        self.store = store
        self.handler = handler
        self.model_factory = model_factory
        self.planning = planning
        self.policy = ApprovalPolicy(mode=record.mode)  # type: ignore[arg-type]
        self.backend = session_backend(record.cwd, store.scratch_dir(record.thread_id), store.home)
        self._graph: Any = None
        self._window: int | None = None
        self._turn: asyncio.Task | None = None
        self._live: projection.LiveProjection | None = None
        self._cancel_requested = False

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def config(self) -> dict[str, Any]:
        return {
            "configurable": {"thread_id": self.record.thread_id},
            "recursion_limit": RECURSION_LIMIT,
        }

    async def graph(self) -> Any:
        if self._graph is None:
            model = self.model_factory(self.record.model)
            profile = getattr(model, "profile", None) or {}
            self._window = profile.get("max_input_tokens")
            checkpointer = await self.store.checkpointer()
            self._graph = build_session_agent(
                model, self.backend, self.policy, checkpointer, planning=self.planning
            )
        return self._graph

    def set_mode(self, mode: Mode) -> None:
        self.policy.mode = mode
        self.record = self.store.update(self.record, mode=mode)

    def set_model(self, spec: str) -> None:
        """Switch model; the thread is kept, the graph is rebuilt on the next turn."""
        self.model_factory(spec)  # fail now, not at the next prompt
        self.record = self.store.update(self.record, model=spec)
        self._graph = None

    async def history(self) -> list[Event]:
        graph = await self.graph()
        state = await graph.aget_state(self.config)
        return list(projection.replay(state.values.get("messages", []), self.backend))

    @property
    def running(self) -> bool:
        return self._turn is not None and not self._turn.done()

    async def prompt(self, content: str | list[dict]) -> StopReason:
        """Run one turn for the user's message; returns why it stopped."""
        if self.running:
            raise SessionBusy("a turn is already running in this session; cancel it first")
        await self.graph()  # a configuration problem is reported as itself, before the turn
        self._cancel_requested = False
        self._turn = asyncio.create_task(self._run_turn(content))
        try:
            return await self._turn
        except asyncio.CancelledError:
            if not self._cancel_requested:
                raise
            await self._settle(CANCELLED)
            return "cancelled"
        except GraphRecursionError:
            await self._settle(FAILED_RUN)
            return "max_turn_requests"
        except Exception as exc:
            await self._settle(FAILED_RUN)
            log.exception("turn failed in session %s", self.id)
            raise TurnError(f"the turn failed: {type(exc).__name__}: {exc}") from exc
        finally:
            self._turn = None
            self._live = None

    async def cancel(self) -> None:
        """Stop the running turn now; `prompt` then answers `cancelled`."""
        if self.running:
            self._cancel_requested = True
            self._turn.cancel()  # type: ignore[union-attr]

    async def _run_turn(self, content: str | list[dict]) -> StopReason:
        graph = await self.graph()
        live = self._live = projection.LiveProjection(self.backend, self._window)
        message = HumanMessage(content=content)
        if self.record.title is None:
            title = title_from(projection.human_text(message))
            self.record = self.store.update(self.record, title=title or "Untitled")
            await self.handler.emit(TitleChanged(self.record.title or ""))
        payload: Any = {"messages": [message]}
        while True:
            async for namespace, mode, data in graph.astream(
                payload, self.config, stream_mode=STREAM_MODES, subgraphs=True
            ):
                for event in live.feed(namespace, mode, data):
                    await self.handler.emit(event)
            if not live.interrupts:
                break
            payload = Command(resume=await self._decide_all(live))
        self.record = self.store.update(self.record)
        return projection.stop_reason(live.last_ai)

    async def _decide_all(self, live: projection.LiveProjection) -> dict[str, dict]:
        pending = {i.id: i for i in live.interrupts}  # a sub-agent's interrupt can repeat
        live.interrupts.clear()
        decisions = {}
        for interrupt_id, interrupt in pending.items():
            decisions[interrupt_id] = await self._decide(interrupt.value)
        return decisions

    async def _decide(self, request: dict) -> dict:
        name, args, call_id = request["name"], request.get("args") or {}, request["tool_call_id"]
        if self.policy.mode == "plan":  # a sub-agent trying to change things in plan mode
            return {"type": "reject", "message": "Plan mode is read-only; nothing was changed."}
        answer = self.policy.preset_answer(name, args)
        if answer is None:
            _, title, _ = projection.describe_call(name, args, self.backend)
            card = self.policy.task_of.get(call_id)
            if card is not None:  # ask on the parent's task card, the one the user sees
                title = f"Sub-agent: {title}"
            options = permission_options(APPROVAL_DECISIONS)
            question = PermissionRequest(card or call_id, title, options)
            answer = await self.handler.ask_permission(question)
        if answer is None:  # the client cancelled the question: cancel the turn
            self._cancel_requested = True
            raise asyncio.CancelledError
        self.policy.remember(name, args, answer)
        if answer.startswith("allow"):
            return {"type": "approve"}
        return {"type": "reject"}

    async def _settle(self, reason: str) -> None:
        """After a cancel or failure: record finished results, answer unfinished calls,
        and close every card that is still open."""
        live = self._live
        try:
            graph = self._graph
            state = await graph.aget_state(self.config)
            messages = state.values.get("messages", [])
            finished = {
                m.tool_call_id: m
                for task in state.tasks
                if task.result
                for m in projection.messages_of(task.result)
                if isinstance(m, ToolMessage)
            }
            answers: list[Any] = list(finished.values())
            for call in dangling_tool_calls(messages):
                if call["id"] not in finished:
                    answers.append(answer_for(call, reason))
            if answers:
                await graph.aupdate_state(self.config, {"messages": answers}, as_node="tools")
        except Exception:
            log.exception("could not repair session %s after an interrupted turn", self.id)
            answers = []
        if live is None:
            return
        by_id = {m.tool_call_id: m for m in answers if isinstance(m, ToolMessage)}
        for call_id in sorted(live.announced - live.finished):
            live.finished.add(call_id)
            message = by_id.get(call_id)
            event = (
                projection.tool_finished(message)
                if message is not None
                else ToolFinished(call_id, "failed", reason)
            )
            with contextlib.suppress(Exception):
                await self.handler.emit(event)

    async def close(self) -> None:
        await self.cancel()
        if self._turn is not None:
            with contextlib.suppress(BaseException):
                await self._turn
