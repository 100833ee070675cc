"""Session: one agent thread with its workspace, mode and approvals, driven turn by turn.

It speaks no wire protocol: a face gives it a `SessionHandler` and gets events. The turn
loop lives in `turn.py`, interrupts in `interrupts.py`, slash commands in `commands.py`;
sessions are made, opened and closed by the `SessionManager` (`manager.py`). This module
is light to import: LangChain loads with the first turn (`graph()`), so a face can open a
session before the harness has finished loading.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, cast

from deepacp.backends.filesystem import keep_write_journal
from deepacp.backends.protocol import Backend
from deepacp.backends.sandbox import DEFAULT_POLICY, SandboxPolicy, SandboxSetting, sandbox_problem
from deepacp.config import Effort, ModelPrices, load_config
from deepacp.errors import ConfigError, SessionBusy
from deepacp.events import (
    CommandsChanged,
    EffortChanged,
    Event,
    MessageChunk,
    ModeChanged,
    ModelChanged,
    Notice,
    StopReason,
    TitleChanged,
)
from deepacp.harness.messages import text_of
from deepacp.harness.usage import USAGE_KEY, TokenUsage
from deepacp.secrets import register_secrets
from deepacp.session import commands
from deepacp.session.approvals import ApprovalPolicy, runs_code_later
from deepacp.session.control import TurnCancelled
from deepacp.session.handler import SessionHandler
from deepacp.session.mcp import McpServer, McpServers, is_read_only
from deepacp.session.modes import Mode
from deepacp.session.store import Records, SessionRecord
from deepacp.session.workspace import WorkspaceView, session_backend

log = logging.getLogger(__name__)

RECURSION_LIMIT = 1000
TITLE_CHARS = 60


class ModelFactory(Protocol):
    """Turns a model spec into a chat model reasoning at `effort`
    (`deepacp.models.resolve_model`), or raises a `ModelConfigError` saying what is missing."""

    def __call__(self, spec: str, /, effort: Effort | None = None) -> Any: ...


Ready = Callable[[], Awaitable[None]]
"""Waits until the harness can be imported without racing another import of it."""


def title_from(text: str) -> str:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first if len(first) <= TITLE_CHARS else first[: TITLE_CHARS - 1].rstrip() + "…"


async def no_wait() -> None:
    return None


def _being_cancelled() -> bool:
    """Whether the running task itself has been asked to stop (not only what it awaits)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class Session:
    def __init__(
        self,
        record: SessionRecord,
        store: Records,
        handler: SessionHandler,
        model_factory: ModelFactory,
        *,
        planning: bool = True,
        view: WorkspaceView | None = None,
        extra_roots: Sequence[str] = (),
        mcp_servers: Sequence[McpServer] = (),
        harness_ready: Ready = no_wait,
        sandbox: SandboxPolicy = DEFAULT_POLICY,
    ) -> None:
        self.record = record
        self.store = store
        keep_write_journal(store.home / "writes")  # and clean up after a killed process
        self.handler = handler
        self.model_factory = model_factory
        self.planning = planning
        self.policy = ApprovalPolicy(mode=record.mode)
        self.policy.runs_code_later = lambda path: runs_code_later(self.backend, path)
        self.sandbox = SandboxSetting(sandbox, unasked=record.mode == "accept-edits")
        self.policy.sandbox = lambda: self.sandbox.effective
        self._sandbox_told = False
        self._view = view
        self._extra_roots = tuple(extra_roots)
        self._harness_ready = harness_ready
        self.backend = self._backend()
        for server in mcp_servers:  # credentials for a server are secrets from us too
            register_secrets(dict(server.env), dict(server.headers))
        self.mcp = McpServers()
        self.mcp.start(list(mcp_servers), record.cwd, harness_ready)
        self._graph: Any = None
        self._model: Any = None
        self._summarizer: Any = None
        self._window: int | None = None
        self._task: asyncio.Task[StopReason] | None = None
        self._shown_commands: tuple[commands.Command, ...] | None = None
        self.last_turn_usage = TokenUsage()
        """What the last turn's model calls used, as the provider reported it."""

    def _backend(self) -> Backend:
        return session_backend(
            self.record.cwd,
            self.store.scratch_dir(self.record.thread_id),
            self.store.home,
            view=self._view,
            extra_roots=self._extra_roots,
            sandbox=self.sandbox,
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
        """The compiled harness for this session (built on first use, and after a change
        of model or a fresh conversation)."""
        if self._graph is None:
            await self._harness_ready()
            from deepacp.harness.middleware.summarization import SummarizationMiddleware
            from deepacp.harness.profiles import profile_for
            from deepacp.session.agent import build_session_agent
            from deepacp.session.ask import ask_user_tool

            model = self.model_factory(self.record.model or "", effort=self.effort)
            profile = getattr(model, "profile", None) or {}
            self._window = profile.get("max_input_tokens")
            await self._report_mcp()
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
                profile=profile_for(self.record.model or ""),
                retry=load_config().retry,
            )
            self._model = model
        return self._graph

    async def _report_mcp(self) -> None:
        """Tell the user, once, about each MCP server that could not start."""
        await self.mcp.ready()
        failures, self.mcp.failures = self.mcp.failures, []
        for server, reason in failures:
            await self.handler.emit(Notice(f"MCP server {server!r} is not available: {reason}"))

    async def announce(self) -> None:
        """The session-start events: the slash commands, then MCP servers that failed and
        (once) a sandbox that cannot work here."""
        self._shown_commands = None
        await self.refresh_commands()
        await self._report_mcp()
        await self._report_sandbox()

    async def _report_sandbox(self) -> None:
        problem = sandbox_problem()
        if self._sandbox_told or self.sandbox.policy == "off" or problem is None:
            return
        self._sandbox_told = True
        await self.handler.emit(
            Notice(
                f"Commands are not sandboxed: {problem}. They run with your rights, and "
                "are asked about as before; `deepacp doctor` checks the set-up."
            )
        )

    async def set_sandbox(self, policy: SandboxPolicy) -> None:
        """Change the sandbox policy; the next command runs under it."""
        self.sandbox.policy = policy
        await self._report_sandbox()

    async def commands(self) -> tuple[commands.Command, ...]:
        index = await commands.skills_of(self.backend)
        return commands.available_commands(index.skills.values())

    async def refresh_commands(self) -> None:
        """Announce the slash commands if they changed since the face last heard of them."""
        listed = await self.commands()
        if listed != self._shown_commands:
            self._shown_commands = listed
            await self.handler.emit(CommandsChanged(listed))

    async def set_mode(self, mode: Mode) -> None:
        self.policy.mode = mode
        self.sandbox.unasked = mode == "accept-edits"
        self.record = self.store.update(self.record, mode=mode)
        await self.handler.emit(ModeChanged(mode))

    async def set_model(self, spec: str) -> None:
        """Switch model; the thread is kept, the graph is rebuilt on the next turn."""
        self.model_factory(spec)  # fail now, not at the next prompt
        self.record = self.store.update(self.record, model=spec)
        self._graph = None
        await self.handler.emit(ModelChanged(spec))

    @property
    def effort(self) -> Effort | None:
        """The effort the user chose for this session (None: the configured default)."""
        return cast("Effort | None", self.record.effort)

    async def set_effort(self, effort: Effort) -> None:
        """Change the reasoning effort; the graph is rebuilt on the next turn."""
        self.record = self.store.update(self.record, effort=effort)
        self._graph = None
        await self.handler.emit(EffortChanged(effort))

    async def history(self) -> list[Event]:
        """The events that redraw the conversation so far (read without building the
        agent: a replay needs neither the model nor the MCP servers)."""
        await self._harness_ready()
        from deepacp.harness.state import read_messages
        from deepacp.session import projection

        messages = await read_messages(await self.store.checkpointer(), self.config)
        return list(projection.replay(messages, self.backend))

    def prices(self) -> ModelPrices | None:
        """The session model's prices in config.toml (None: not configured, or unreadable)."""
        try:
            return load_config(self.store.home).prices.get(self.record.model or "")
        except ConfigError:
            return None

    async def usage(self) -> TokenUsage:
        """The conversation's token usage so far, summed in the thread's state."""
        state = await (await self.graph()).aget_state(self.config)
        return TokenUsage.from_json(state.values.get(USAGE_KEY))

    async def compact(self) -> bool:
        """Summarize the conversation now; False when there is nothing to summarize yet."""
        graph = await self.graph()
        return bool(await self._summarizer.compact(graph, self.config, self._model))

    async def clear(self) -> None:
        """A fresh conversation in this session (the old thread is deleted)."""
        old = self.record.thread_id
        self.record = self.store.update(self.record, thread_id=uuid.uuid4().hex)
        await (await self.store.checkpointer()).adelete_thread(old)
        self.backend = self._backend()
        self._graph = None

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def prompt(self, content: str | list[dict]) -> StopReason:
        """Run one turn for the user's message (or a slash command); returns why it stopped."""
        if self.running:
            raise SessionBusy("a turn is already running in this session; cancel it first")
        self.last_turn_usage = TokenUsage()
        # The task starts with no await before it, so a second prompt sees it running; it
        # covers the wait for the graph (and MCP start-up), so cancel works there too.
        self._task = task = asyncio.create_task(self._dispatch(content))
        try:
            return await task
        except (asyncio.CancelledError, TurnCancelled):
            if _being_cancelled():
                raise asyncio.CancelledError from None  # we are being stopped (shutdown)
            return "cancelled"
        finally:
            self._task = None

    async def cancel(self) -> None:
        """Stop the running turn now; `prompt` then answers `cancelled`."""
        if self._task is not None:
            self._task.cancel()

    async def _dispatch(self, content: str | list[dict]) -> StopReason:
        text = content if isinstance(content, str) else text_of(content[:1])
        available = await self.commands()
        parsed = commands.parse_command(text, (c.name for c in available))
        if parsed is None:
            return await self._run(content)
        name, argument = parsed
        if (builtin := commands.HANDLERS.get(name)) is not None:
            await self.handler.emit(MessageChunk(await builtin(self, argument)))
            return "end_turn"
        skill = (await commands.skills_of(self.backend)).skills[name]
        body = await self.backend.read_text(skill.path)
        rest = content[1:] if isinstance(content, list) else []
        return await self._run(
            [{"type": "text", "text": commands.skill_prompt(skill, body, argument)}, *rest]
        )

    async def _run(self, content: str | list[dict]) -> StopReason:
        from deepacp.session.interrupts import InterruptResolver
        from deepacp.session.turn import Turn

        graph = await self.graph()
        await self._report_sandbox()  # faces that announce nothing hear of it here
        resolver = InterruptResolver(self.policy, self.handler, self.backend)
        turn = Turn(
            graph, self.config, self.backend, self.handler, resolver, self._window, self.prices()
        )
        if self.record.title is None:
            title = title_from(content if isinstance(content, str) else text_of(content))
            self.record = self.store.update(self.record, title=title or "Untitled")
            await self.handler.emit(TitleChanged(self.record.title or ""))
        try:
            return await turn.run(content)
        finally:
            self.last_turn_usage = turn.usage
            self.record = self.store.update(self.record)

    async def close(self) -> None:
        """End the session: its turn, its MCP connections, and what its graph holds (the
        model, middleware and tools), so a closed session costs no memory while a face
        still holds it."""
        task = self._task
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        self._task = None
        await self.mcp.close()
        self._graph = self._model = self._summarizer = None
