"""Session: one agent thread with its mode and approvals, driven turn by turn.

The runtime owns the turn loop (stream, ask for approvals and answers, resume), cancel
(stop the model stream and any running command, keep finished results, answer the rest
as cancelled), slash commands, and history replay. It speaks no wire protocol: a face
gives it a `SessionHandler` and gets events.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.errors import GraphRecursionError
from langgraph.types import Command

from deepacp.backends.filesystem import keep_write_journal
from deepacp.errors import DeepacpError, SessionBusy, TurnError
from deepacp.events import (
    ASK_IN_CHAT,
    Event,
    MessageChunk,
    ModeChanged,
    Notice,
    PermissionKind,
    PermissionRequest,
    Question,
    StopReason,
    TitleChanged,
    ToolFinished,
    ToolStarted,
)
from deepacp.harness.messages import text_of
from deepacp.harness.middleware.patch_tool_calls import answer_for, dangling_tool_calls
from deepacp.harness.middleware.summarization import SummarizationMiddleware
from deepacp.harness.skills import discover_skills
from deepacp.secrets import redact, register_secrets
from deepacp.session import commands, projection
from deepacp.session.agent import APPROVAL_DECISIONS, build_session_agent
from deepacp.session.approvals import (
    MODE_IDS,
    ApprovalPolicy,
    Mode,
    permission_options,
    runs_code_later,
)
from deepacp.session.ask import ASK_USER, ASKED_IN_CHAT, ask_user_tool
from deepacp.session.mcp import McpServer, McpServers, is_read_only
from deepacp.session.redaction import LiveRedactor
from deepacp.session.store import SessionRecord, SessionStore
from deepacp.session.workspace import (
    MEMORY_SOURCES,
    SKILL_SOURCES,
    WorkspaceView,
    session_backend,
)

log = logging.getLogger(__name__)

CANCELLED = "Cancelled by the user before it finished."
FAILED_RUN = "The run stopped with an error before this tool call finished."
PLAN_REFUSAL = {"type": "reject", "message": "Plan mode is read-only; nothing was changed."}
STREAM_MODES = ["messages", "updates", "custom", "tools"]
RECURSION_LIMIT = 1000
TITLE_CHARS = 60


class SessionHandler(Protocol):
    """What a face provides to a session: somewhere to send events, someone to ask."""

    async def emit(self, event: Event) -> None: ...

    async def ask_permission(self, request: PermissionRequest) -> PermissionKind | None: ...

    async def ask(self, question: Question) -> str | None:
        """The user's answer, `ASK_IN_CHAT` to end the turn with the question, or None
        when the user dismissed it (the turn is cancelled)."""
        ...


class _AskInChat(Exception):
    """Leave the turn: the question goes to the user as the agent's message."""

    def __init__(self, question: Question) -> None:
        self.question = question


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
        view: WorkspaceView | None = None,
        extra_roots: Sequence[str] = (),
        mcp_servers: Sequence[McpServer] = (),
    ) -> None:
        self.record = record
        self.store = store
        keep_write_journal(store.home / "writes")  # and clean up after a killed process
        self.handler = handler
        self.model_factory = model_factory
        self.planning = planning
        self.policy = ApprovalPolicy(mode=record.mode)  # type: ignore[arg-type]
        self.policy.runs_code_later = lambda path: runs_code_later(self.backend, path)
        self._view = view
        self._extra_roots = tuple(extra_roots)
        self.backend = self._backend()
        for server in mcp_servers:  # credentials for a server are secrets from us too
            register_secrets(dict(server.env), dict(server.headers))
        self.mcp = McpServers()
        self.mcp.start(list(mcp_servers), record.cwd)
        self._graph: Any = None
        self._model: Any = None
        self._summarizer: SummarizationMiddleware | None = None
        self._window: int | None = None
        self._turn: asyncio.Task | None = None
        self._live: projection.LiveProjection | None = None
        self._cancel_requested = False
        self.last_turn_tokens: dict[str, int] = {}
        """Input and output tokens of the last turn's model calls."""

    def _backend(self) -> Any:
        scratch = self.store.scratch_dir(self.record.thread_id)
        return session_backend(
            self.record.cwd,
            scratch,
            self.store.home,
            view=self._view,
            extra_roots=self._extra_roots,
        )

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
            await self.mcp.ready()
            for server, reason in self.mcp.failures:
                await self.handler.emit(Notice(f"MCP server {server!r} is not available: {reason}"))
            self.mcp.failures.clear()
            self.policy.extra_gated = frozenset(
                t.name for t in self.mcp.tools if not is_read_only(t)
            )
            self._summarizer = SummarizationMiddleware(self.backend)
            self._graph = build_session_agent(
                model,
                self.backend,
                self.policy,
                await self.store.checkpointer(),
                tools=[*self.mcp.tools, ask_user_tool()],
                summarizer=self._summarizer,
                planning=self.planning,
            )
            self._model = model
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

    async def commands(self) -> tuple[commands.Command, ...]:
        index = await discover_skills(self.backend, SKILL_SOURCES)
        return commands.available_commands(index.skills.values())

    @property
    def running(self) -> bool:
        return self._turn is not None and not self._turn.done()

    async def prompt(self, content: str | list[dict]) -> StopReason:
        """Run one turn for the user's message (or a slash command); returns why it stopped."""
        if self.running:
            raise SessionBusy("a turn is already running in this session; cancel it first")
        self._cancel_requested = False
        self.last_turn_tokens = {}
        # The turn starts with no await before it, so a second prompt sees it running; it
        # covers the wait for the graph (and MCP start-up), so cancel works there too.
        self._turn = asyncio.create_task(self._dispatch(content))
        try:
            return await self._turn
        except DeepacpError:  # a configuration problem, say: reported as itself
            await self._settle(FAILED_RUN)
            raise
        except asyncio.CancelledError:
            if not self._cancel_requested:
                raise
            await self._settle(CANCELLED)
            return "cancelled"
        except _AskInChat as asked:
            await self._settle(CANCELLED, answers={asked.question.tool_call_id: ASKED_IN_CHAT})
            await self.handler.emit(MessageChunk(_question_text(asked.question)))
            return "end_turn"
        except GraphRecursionError:
            await self._settle(FAILED_RUN)
            return "max_turn_requests"
        except Exception as exc:
            await self._settle(FAILED_RUN)
            log.exception("turn failed in session %s", self.id)
            raise TurnError(redact(f"the turn failed: {type(exc).__name__}: {exc}")) from exc
        finally:
            self._turn = None
            self._live = None

    async def cancel(self) -> None:
        """Stop the running turn now; `prompt` then answers `cancelled`."""
        if self.running:
            self._cancel_requested = True
            self._turn.cancel()  # type: ignore[union-attr]

    async def _dispatch(self, content: str | list[dict]) -> StopReason:
        await self.graph()
        text = content if isinstance(content, str) else text_of(content[:1])
        available = await self.commands()
        parsed = commands.parse_command(text, (c.name for c in available))
        if parsed is None:
            return await self._run_turn(content)
        name, argument = parsed
        if name in {c.name for c in commands.BUILTIN}:
            await self.handler.emit(MessageChunk(await self._builtin(name, argument)))
            return "end_turn"
        index = await discover_skills(self.backend, SKILL_SOURCES)
        skill = index.skills[name]
        body = await self.backend.read_text(skill.path)
        rest = content[1:] if isinstance(content, list) else []
        message = [{"type": "text", "text": commands.skill_prompt(skill, body, argument)}, *rest]
        return await self._run_turn(message)

    async def _builtin(self, name: str, argument: str) -> str:
        graph = await self.graph()
        if name == commands.COMPACT:
            assert self._summarizer is not None
            done = await self._summarizer.compact(graph, self.config, self._model)
            return (
                "Compacted: older messages are now a summary."
                if done
                else "Nothing to compact yet."
            )
        if name == commands.MEMORY:
            lines = [
                "Memory files (AGENTS.md) in use — edit them to change what the agent remembers:"
            ]
            for path in MEMORY_SOURCES:
                where = self.backend.disk_path(path)
                try:
                    await self.backend.read_text(path)
                    state = "loaded"
                except Exception:
                    state = "not created yet"
                lines.append(f"- {path} ({where}): {state}")
            return "\n".join(lines)
        if name == commands.SKILLS:
            index = await discover_skills(self.backend, SKILL_SOURCES)
            lines = [f"- /{s.name}: {s.description}" for s in index.skills.values()] or ["(none)"]
            lines += [f"- warning: {w}" for w in index.warnings]
            return "Skills:\n" + "\n".join(lines)
        if name == commands.CLEAR:
            old = self.record.thread_id
            self.record = self.store.update(self.record, thread_id=uuid.uuid4().hex)
            await (await self.store.checkpointer()).adelete_thread(old)
            self.backend = self._backend()
            self._graph = None
            return "Started a fresh conversation."
        if name == commands.MODE:
            if argument not in MODE_IDS:
                return f"Unknown mode {argument!r}; choose one of: {', '.join(MODE_IDS)}."
            self.set_mode(argument)  # type: ignore[arg-type]
            await self.handler.emit(ModeChanged(argument))
            return f"Mode: {argument}."
        raise AssertionError(name)

    async def _run_turn(self, content: str | list[dict]) -> StopReason:
        graph = await self.graph()
        live = self._live = projection.LiveProjection(self.backend, self._window)
        message = HumanMessage(content=content)
        if self.record.title is None:
            title = title_from(projection.human_text(message))
            self.record = self.store.update(self.record, title=title or "Untitled")
            await self.handler.emit(TitleChanged(self.record.title or ""))
        payload: Any = {"messages": [message]}
        redactor = LiveRedactor()  # the one place live events leave for the faces
        while True:
            async for namespace, mode, data in graph.astream(
                payload, self.config, stream_mode=STREAM_MODES, subgraphs=True
            ):
                for event in live.feed(namespace, mode, data):
                    if isinstance(event, ToolStarted):  # the card shows what an edit proposes
                        event = await projection.with_proposed_diff(event, self.backend)
                        live.started[event.tool_call_id] = event
                    for shown in redactor.feed(event):
                        await self.handler.emit(shown)
            for shown in redactor.flush():
                await self.handler.emit(shown)
            if not live.interrupts:
                break
            payload = Command(resume=await self._decide_all(live))
        self.record = self.store.update(self.record)
        self.last_turn_tokens = dict(live.tokens)
        return projection.stop_reason(live.last_ai)

    async def _decide_all(self, live: projection.LiveProjection) -> dict[str, Any]:
        pending = {i.id: i for i in live.interrupts}  # a sub-agent's interrupt can repeat
        live.interrupts.clear()
        decisions: dict[str, Any] = {}
        for interrupt_id, interrupt in pending.items():
            if interrupt.value.get("type") == ASK_USER:
                decisions[interrupt_id] = await self._answer(interrupt.value)
            else:
                decisions[interrupt_id] = await self._decide(interrupt.value)
        return decisions

    async def _answer(self, value: dict) -> str:
        question = Question(
            value["tool_call_id"], value["question"], tuple(value.get("choices") or ())
        )
        answer = await self.handler.ask(question)
        if answer is None:  # dismissed: cancel the turn
            self._cancel_requested = True
            raise asyncio.CancelledError
        if answer == ASK_IN_CHAT:
            raise _AskInChat(question)
        return answer

    async def _decide(self, request: dict) -> dict:
        name, args = request["name"], request.get("args") or {}
        if self.policy.mode == "plan":  # a sub-agent trying to change things in plan mode
            return PLAN_REFUSAL
        answer = self.policy.preset_answer(name, args)
        if answer is None:
            answer = await self.handler.ask_permission(await self._permission_request(request))
        if answer is None:  # the client cancelled the question: cancel the turn
            self._cancel_requested = True
            raise asyncio.CancelledError
        self.policy.remember(name, args, answer)
        if self.policy.mode == "plan":  # switched to plan while the question was open
            return PLAN_REFUSAL
        if answer.startswith("allow"):
            return {"type": "approve"}
        return {"type": "reject"}

    async def _permission_request(self, request: dict) -> PermissionRequest:
        """The question for a gated call, with the kind and proposed diff its card shows."""
        name, args, call_id = request["name"], request.get("args") or {}, request["tool_call_id"]
        live = self._live
        started = live.started.get(call_id) if live is not None else None
        if started is None:  # a sub-agent's call: it has no card of its own
            started = await projection.with_proposed_diff(
                projection.tool_started({"id": call_id, "name": name, "args": args}, self.backend),
                self.backend,
            )
        title = started.title
        card = self.policy.task_of.get(call_id)
        if card is not None:  # ask on the parent's task card, the one the user sees
            title = f"Sub-agent: {title}"
        options = permission_options(APPROVAL_DECISIONS)
        return PermissionRequest(
            card or call_id, title, options, started.kind, started.diff, started.locations
        )

    async def _settle(self, reason: str, answers: dict[str, str] | None = None) -> None:
        """After a cancel or failure: record finished results, answer unfinished calls
        (with `answers` where given, else `reason`), and close every card still open."""
        live = self._live
        repaired: list[Any] = []
        if self._graph is None:  # stopped before the turn began: nothing to repair
            return
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
            repaired = list(finished.values())
            for call in dangling_tool_calls(messages):
                if call["id"] in finished:
                    continue
                if call["id"] in (answers or {}):
                    repaired.append(
                        ToolMessage(answers[call["id"]], tool_call_id=call["id"], name=call["name"])
                    )
                else:
                    repaired.append(answer_for(call, reason))
            if repaired:
                await graph.aupdate_state(self.config, {"messages": repaired}, as_node="tools")
        except Exception:
            log.exception("could not repair session %s after an interrupted turn", self.id)
        if live is None:
            return
        by_id = {m.tool_call_id: m for m in repaired if isinstance(m, ToolMessage)}
        for call_id in sorted(live.announced.keys() - live.finished):
            live.finished.add(call_id)
            message = by_id.get(call_id)
            event = (
                projection.tool_finished(message, live.announced[call_id])
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
        await self.mcp.close()


def _question_text(question: Question) -> str:
    if not question.choices:
        return question.question
    options = "\n".join(f"- {choice}" for choice in question.choices)
    return f"{question.question}\n{options}"
