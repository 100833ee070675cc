"""Session: one agent thread, driven turn by turn.

A small core — the record, the handler, the turn queue; prompt, steer, cancel, close —
holding a host (where the thread runs, `hosts/`) and parts (its features, `parts/`). It
speaks no wire protocol: a face gives it a `SessionHandler` and gets events. Sessions are
made, opened and closed by the lifecycle owner (`lifecycle.py`). Light to import: the
harness loads with the first turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from deepacp.backends.protocol import Backend
from deepacp.config import Effort
from deepacp.errors import DeepacpError
from deepacp.events import (
    Command,
    CommandsChanged,
    EffortChanged,
    Event,
    MessageChunk,
    ModeChanged,
    ModelChanged,
    Notice,
    StopReason,
)
from deepacp.harness import TokenUsage, text_of
from deepacp.session import commands
from deepacp.session.assembly import Contributions
from deepacp.session.beginning import begin, keep_cancelled
from deepacp.session.context import SessionContext
from deepacp.session.handler import SessionHandler
from deepacp.session.hosts import Host
from deepacp.session.modes import Mode
from deepacp.session.parts.base import EndedTurn, Part, each_part
from deepacp.session.storage.records import Records, SessionRecord
from deepacp.session.turns.approvals import ApprovalPolicy
from deepacp.session.turns.control import TurnCancelled
from deepacp.session.turns.queue import TurnQueue

log = logging.getLogger(__name__)

QUEUED = "Your next message is queued: it runs when this turn ends."
P = TypeVar("P", bound=Part)
Content = str | list[dict]


async def _messages(contents: Sequence[Content]) -> list[Any]:
    """What the user steered into the turn, as messages for the model."""
    from langchain_core.messages import HumanMessage

    return [HumanMessage(content=c if isinstance(c, str) else [*c]) for c in contents]


def _being_cancelled() -> bool:
    """Whether the running task itself has been asked to stop (not only what it awaits)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class Session:
    def __init__(
        self,
        record: SessionRecord,
        records: Records,
        handler: SessionHandler,
        host: Host,
        parts: Sequence[Part],
        policy: ApprovalPolicy,
        backend_for: Callable[[SessionRecord], Backend],
        roots: Sequence[str] = (),
    ) -> None:
        """`backend_for`: the workspace backend for a thread (its scratch space is the
        thread's); `roots`: the workspace roots besides the record's folder."""
        self.id = record.id
        self.handler = handler
        self.host = host
        self.parts = tuple(parts)
        self.turns = TurnQueue()
        self.ctx = SessionContext(
            record, records, handler, host, policy, backend_for(record), self.turns,
            (record.cwd, *roots), rebuild=self._rebuild, graph=self.graph, history=self.history,
            clear=self.clear,
            taken_back=lambda ids: each_part(self.parts, lambda part: part.taken_back(ids)),
        )  # fmt: skip
        self._backend_for = backend_for
        self._graph: Any = None
        self._made = Contributions()
        self._task: asyncio.Task[StopReason] | None = None
        self._shown_commands: tuple[Command, ...] | None = None
        self.last_turn_usage, self.last_message_id = TokenUsage(), cast("str | None", None)
        for part in self.parts:
            part.bind(self.ctx)

    @property
    def record(self) -> SessionRecord:
        return self.ctx.record

    def part(self, kind: type[P]) -> P:
        """This session's part of `kind` (the lifecycle gives every session each part)."""
        for part in self.parts:
            if isinstance(part, kind):
                return part
        raise LookupError(f"session {self.id} has no {kind.__name__}")

    def _rebuild(self, keep_model: bool = False) -> None:
        self._graph = None
        if not keep_model:
            self.host.forget_model()

    async def graph(self) -> Any:
        """The session's compiled harness (built again after what it is made of changed)."""
        if self._graph is None:
            await self.host.ready()  # the parts may import the harness: never concurrently
            made = Contributions()
            for part in self.parts:
                await part.contribute(made)
            made.inbox.append(lambda: _messages(self.turns.steered()))  # the user's, last
            self._graph, self._made = await self.host.graph(self.ctx, made), made
        return self._graph

    async def opening(self) -> list[Event]:
        """The session-start events: the slash commands, then what the parts say."""
        events: list[Event] = [CommandsChanged(await self.commands())]
        for part in self.parts:
            events += await part.opening()
        return events

    async def announce(self) -> None:
        """Send the session-start events (the commands as shown from now on)."""
        events = await self.opening()
        self._shown_commands = cast(CommandsChanged, events[0]).commands
        for event in events:
            await self.handler.emit(event)

    async def commands(self) -> tuple[Command, ...]:
        """The slash commands: the built-in ones, the parts', then one per skill."""
        table = commands.table(self.ctx, self.set_mode, self.parts)
        ours = [command for command, _ in table.values()]
        return commands.with_skills(ours, await commands.skills_of(self.ctx.backend))

    async def refresh_commands(self) -> None:
        """Announce the slash commands if they changed since the face last heard of them."""
        listed = await self.commands()
        if listed != self._shown_commands:
            self._shown_commands = listed
            await self.handler.emit(CommandsChanged(listed))

    async def history(self) -> list[Event]:
        """The events that redraw the conversation: saved by a part, or read from the
        thread (without building the agent) and completed by the parts."""
        for part in self.parts:
            if (saved := await part.saved_history()) is not None:
                return saved
        from deepacp.session.turns import projection

        messages = await self.host.messages(self.ctx.config)
        events: list[Event] = list(projection.replay(messages, self.ctx.backend))
        for part in self.parts:
            events = await part.history(events)
        return events

    async def set_mode(self, mode: Mode) -> None:
        self.ctx.policy.mode = mode
        self.ctx.update(mode=mode)
        for part in self.parts:
            part.mode_changed(mode)
        await self.handler.emit(ModeChanged(mode))

    async def set_model(self, spec: str) -> None:
        """Switch model; the thread is kept, the graph is rebuilt on the next turn."""
        self.host.check_model(spec)  # fail now, not at the next prompt
        self.ctx.update(model=spec)
        self._rebuild()
        await self.handler.emit(ModelChanged(spec))

    async def set_effort(self, effort: Effort) -> None:
        """Change the reasoning effort; the graph is rebuilt on the next turn."""
        self.ctx.update(effort=effort)
        self._rebuild()
        await self.handler.emit(EffortChanged(effort))

    async def clear(self) -> None:
        """A fresh conversation in this session (the old thread is deleted)."""
        old = self.record.thread_id
        record = self.ctx.update(thread_id=uuid.uuid4().hex)
        await self.host.delete_thread(old)
        self.ctx.backend = self._backend_for(record)
        self._rebuild()
        await each_part(self.parts, lambda part: part.cleared())

    @property
    def running(self) -> bool:
        """A turn is running (or about to: a queued prompt takes over)."""
        return self.turns.busy

    async def prompt(self, content: Content) -> StopReason:
        """Run one turn for the user's message (or a slash command); returns why it stopped.
        While another turn runs it waits for that turn to end (queued, in order); a cancel
        meanwhile answers it `cancelled` without running it."""
        if not await self.turns.claim(lambda: self.handler.emit(Notice(QUEUED))):
            return "cancelled"
        return await self._turn(content)

    def start(self, content: Content) -> asyncio.Task[StopReason] | None:
        """A turn no request waits for, taking the idle session at once (so a message
        steered right after joins it); None when a turn runs already."""
        return asyncio.create_task(self._turn(content)) if self.turns.take() else None

    async def steer(self, content: Content) -> bool:
        """Add the user's message to the running turn, at its next model call; False when
        no turn runs. A part may refuse it (a `DeepacpError` saying why)."""
        if not self.turns.busy:
            return False
        text = content if isinstance(content, str) else text_of(content)
        for part in self.parts:
            if (refused := await part.before_prompt(text, steered=True)) is not None:
                raise DeepacpError(refused)
        return self.turns.steer(content)

    async def cancel(self) -> None:
        """Stop the running turn, drop what waits; `prompt` answers `cancelled` for each."""
        self.turns.drop()
        if self._task is not None:
            self._task.cancel()

    async def stop(self) -> None:
        """Cancel the turn and the queued prompts, and wait until the turn has ended."""
        task = self._task
        await self.cancel()
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)

    async def _turn(self, content: Content) -> StopReason:
        """Run a claimed turn (the message, then those steered into it that wait for a
        model call) and release it; cancel reaches the wait for the graph too."""
        self.last_turn_usage, self.last_message_id = TokenUsage(), None
        ran: list[str] = []
        stop: StopReason | None = None

        async def steered() -> StopReason:
            stop = await self._dispatch(content, ran)
            while later := self.turns.steered():
                for message in later[1:]:
                    self.turns.steer(message)  # for that run's first model call
                stop = await self._run(later[0], ran)
            return stop

        self._task = task = asyncio.create_task(steered())
        try:
            stop = await task
            return stop
        except (asyncio.CancelledError, TurnCancelled):
            if _being_cancelled():
                raise asyncio.CancelledError from None  # we are being stopped (shutdown)
            table = commands.table(self.ctx, self.set_mode, self.parts)
            if not ran and not commands.names_command(content, table):  # before it began
                self.turns.hold(keep_cancelled(self.ctx, self.parts, content))  # it happened
            stop = "cancelled"
            return stop
        finally:
            self._task = None
            self.turns.release()
            ended = EndedTurn(tuple(ran), stop)
            await asyncio.shield(each_part(self.parts, lambda part: part.turn_ended(ended)))

    async def _dispatch(self, content: Content, ran: list[str]) -> StopReason:
        whole = content if isinstance(content, str) else text_of(content)
        for part in self.parts:
            if await part.before_prompt(whole, steered=False) is not None:
                return "refusal"
        table = commands.table(self.ctx, self.set_mode, self.parts)
        routed = await commands.route(content, table, self.ctx.backend)
        if isinstance(routed, commands.Answered):
            await self.handler.emit(MessageChunk(routed.text))
            return "end_turn"
        return await self._run(routed, ran)

    async def _run(self, content: Content, ran: list[str]) -> StopReason:
        graph = await self.graph()  # first: it waits for the harness thread to import these
        from deepacp.session.turns.interrupts import InterruptResolver
        from deepacp.session.turns.turn import Turn
        from deepacp.session.turns.usage import prices_of

        ctx, made = self.ctx, self._made
        resolver = InterruptResolver(ctx.policy, self.handler, ctx.backend, made.hooks)
        stopping = made.hooks.stopping if made.hooks is not None else None
        prices = prices_of(ctx.records.home, self.record.model)
        turn = Turn(
            graph, ctx.config, ctx.backend, self.handler, resolver, self.host.window, prices,
            stopping, made.task_status,
        )  # fmt: skip
        start, state = await begin(self.ctx, self.parts, graph, content, ran)
        self.last_message_id = start.message_id
        try:
            return await turn.run(content, state, start.message_id)
        finally:
            self.last_turn_usage = self.last_turn_usage + turn.usage
            ctx.update()
            await asyncio.shield(each_part(self.parts, lambda part: part.prompt_ended(start)))

    async def close(self) -> None:
        """End the session: its turn, its parts, and what its graph holds (so a closed
        session costs no memory while a face still holds it)."""
        await self.stop()
        await self.turns.let_go()
        with contextlib.suppress(Exception):
            await each_part(self.parts, lambda part: part.closed())
        self._graph, self._made = None, Contributions()
        await self.host.close()
