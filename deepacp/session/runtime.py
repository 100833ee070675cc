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
from pathlib import Path
from typing import Any, Protocol, cast

from deepacp.backends.filesystem import keep_write_journal
from deepacp.backends.protocol import Backend
from deepacp.backends.remote import RemoteBackend
from deepacp.backends.sandbox import (
    DEFAULT_POLICY,
    Sandbox,
    SandboxPolicy,
    SandboxSetting,
    sandbox_problem,
)
from deepacp.config import DEFAULT_GOAL_ROUNDS, Effort, ModelPrices, load_config
from deepacp.errors import ConfigError, DeepacpError
from deepacp.events import (
    CommandsChanged,
    EffortChanged,
    Event,
    MessageChunk,
    ModeChanged,
    ModelChanged,
    Notice,
    PlanEntry,
    PlanUpdated,
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
from deepacp.session.hooks import SessionHooks
from deepacp.session.mcp import McpServer, McpServers, is_read_only
from deepacp.session.modes import Mode
from deepacp.session.queue import TurnQueue
from deepacp.session.replays import replays_of, save_after_turn, save_now
from deepacp.session.rewind import RecordingBackend, Restored, conflicts, finish_turn, restore
from deepacp.session.snapshots import RestorePoint, RestorePoints
from deepacp.session.store import Records, SessionRecord
from deepacp.session.threads import ServerThreads
from deepacp.session.turn_tasks import CANCELLED, REWOUND, stop_turn_tasks
from deepacp.session.workspace import ReviewSource, WorkspaceView, session_backend

log = logging.getLogger(__name__)

RECURSION_LIMIT = 1000
QUEUED = "Your next message is queued: it runs when this turn ends."
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
        review: ReviewSource | None = None,
        extra_roots: Sequence[str] = (),
        mcp_servers: Sequence[McpServer] = (),
        harness_ready: Ready = no_wait,
        sandbox: SandboxPolicy = DEFAULT_POLICY,
        remote: RemoteBackend | None = None,
        server: ServerThreads | None = None,
        background: bool = True,
    ) -> None:
        """`background`: whether the agent can start background tasks."""
        self.record = record
        self.server = server
        """The LangGraph server the harness runs on (None: in this process)."""
        self.store = store
        keep_write_journal(store.home / "writes")  # and clean up after a killed process
        self.handler = handler
        self.model_factory = model_factory
        self.planning = planning
        self.policy = ApprovalPolicy(mode=record.mode)
        self.policy.runs_code_later = lambda path: runs_code_later(self.backend, path)
        self.remote = remote
        """The remote checkout the session works on (None: the local workspace). Its
        commands have no sandbox, so every one is asked about as with `off`."""
        if remote is not None:
            sandbox = "off"
        self.sandbox = SandboxSetting(sandbox, unasked=record.mode == "accept-edits")
        self.policy.sandbox = lambda: self.sandbox.effective
        self.policy.breach = self.sandbox.breach
        self._sandbox_told = False
        self._view = view
        self._review = review
        self._extra_roots = tuple(extra_roots)
        self._harness_ready = harness_ready
        self.restore_points = RestorePoints(
            store.home, record.id, Path(record.cwd).expanduser().resolve()
        )
        self.backend = self._backend()
        hidden, roots = (store.home,), tuple(Path(r) for r in self._extra_roots)
        self.hooks = SessionHooks(
            record.id,
            record.cwd,
            store.home,
            handler,
            Sandbox(Path(record.cwd), self.sandbox, hidden, roots),
        )
        for mcp in mcp_servers:  # credentials for a server are secrets from us too
            register_secrets(dict(mcp.env), dict(mcp.headers))
        self.mcp = McpServers()
        self.mcp.start(list(mcp_servers), record.cwd, harness_ready)
        self._replays = replays_of(store, server, remote)
        """Replays saved for a fresh process (None: this session's are not saved)."""
        self._graph: Any = None
        self._model: Any = None
        self._model_of: tuple[str | None, Effort | None] | None = None
        """The spec and effort `_model` was made for."""
        self._fresh_model = True
        """Make a new model when the graph is rebuilt (False: only the goal changed)."""
        self._summarizer: Any = None
        self._window: int | None = None
        self._task: asyncio.Task[StopReason] | None = None
        self._offers_background = background
        self.background: Any = None
        """The session's background tasks (an `InProcessTasks`, made with the first graph:
        it outlives a rebuilt one, and ends with the session)."""
        self._tasks_ended = False
        """A background task ended that the editor's plan does not show yet."""
        self.turns = TurnQueue()
        self._shown_commands: tuple[commands.Command, ...] | None = None
        self.last_turn_usage = TokenUsage()
        """What the last turn's model calls used, as the provider reported it."""
        self.last_message_id: str | None = None
        """The id of the last prompt's restore point (None: it was a command)."""

    def _backend(self) -> Backend:
        return session_backend(
            self.record.cwd,
            self.store.scratch_dir(self.record.thread_id),
            self.store.home,
            view=self._view,
            extra_roots=self._extra_roots,
            sandbox=self.sandbox,
            recorded=lambda workspace: RecordingBackend(workspace, self.restore_points),
            remote=self.remote,
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
        of model, a fresh conversation, or a goal set or removed)."""
        if self._graph is None and self.server is not None:
            from deepacp.session.remote import ServerGraph
            from deepacp.session.threads import RunSettings

            self._graph = ServerGraph(
                self.server,
                self.policy,
                lambda: RunSettings.of(self.record.cwd, self.record.model, self.policy),
            )
        if self._graph is None:
            await self._harness_ready()
            from deepacp.harness.middleware.summarization import SummarizationMiddleware
            from deepacp.harness.profiles import profile_for
            from deepacp.session.agent import build_session_agent
            from deepacp.session.ask import ask_user_tool

            wanted = (self.record.model, self.effort)
            model = self._model if self._model_of == wanted and not self._fresh_model else None
            if model is None:  # off the event loop, as the build below: a cancel is heard
                spec = self.record.model or ""
                model = await asyncio.to_thread(self.model_factory, spec, effort=self.effort)
            self._model_of, self._fresh_model = wanted, True
            profile = getattr(model, "profile", None) or {}
            self._window = profile.get("max_input_tokens")
            await self._report_mcp()
            self.policy.extra_gated = frozenset(
                t.name for t in self.mcp.tools if not is_read_only(t)
            )
            self._summarizer = SummarizationMiddleware(
                self.backend, before_compact=self.hooks.compacting
            )
            config = load_config()
            if self.background is None and self._offers_background:
                from deepacp.harness.background import InProcessTasks

                self.background = InProcessTasks(
                    self._background_ended, lambda: self.last_message_id
                )
            self._graph = await asyncio.to_thread(  # a quarter second of CPU, or more
                build_session_agent,
                model,
                self.backend,
                self.policy,
                await self.store.checkpointer(),
                tools=[*self.mcp.tools, ask_user_tool()],
                summarizer=self._summarizer,
                planning=self.planning,
                profile=profile_for(self.record.model or ""),
                retry=config.retry,
                hooks=self.hooks,
                goal=(lambda: self.record.goal) if self.record.goal else None,
                goal_rounds=config.goal_rounds,
                inbox=self._inbox,
                background=self.background,
            )
            self._model = model
        return self._graph

    async def _inbox(self) -> list[Any]:
        """What the model should hear before its next call: what the user did in review,
        then what the user steered into the turn."""
        from langchain_core.messages import HumanMessage

        from deepacp.harness.middleware.inbox import review_message

        arrived: list[Any] = []
        if self._review is not None and (note := await self._review.note()):
            arrived.append(review_message(note))
        steered = self.turns.steered()
        arrived += [HumanMessage(content=c if isinstance(c, str) else [*c]) for c in steered]
        return arrived

    def _task_status(self, task_id: str) -> Any:
        if self.background is not None:
            return self.background.status(task_id)
        # No turn ran here yet, so none of its tasks runs in this process.
        return "lost" if self.server is None else None

    async def plan(self) -> tuple[PlanEntry, ...]:
        """The plan as the thread's state has it: the task list, then the background tasks
        (each as its runner knows it now)."""
        from deepacp.harness.background import BACKGROUND_KEY
        from deepacp.harness.state import read_value
        from deepacp.session import cards, projection

        if self.server is not None:
            values = (await (await self.graph()).aget_state(self.config)).values
            todos, tasks = values.get("todos"), values.get(BACKGROUND_KEY)
        else:
            checkpointer = await self.store.checkpointer()
            todos = await read_value(checkpointer, self.config, "todos")
            tasks = await read_value(checkpointer, self.config, BACKGROUND_KEY)
        entries = projection.background_entries(tasks, self._task_status)
        return (*cards.plan_of(todos).entries, *entries)

    async def _background_ended(self, task_id: str) -> None:
        self._tasks_ended = True
        await self._show_ended_tasks()

    async def _show_ended_tasks(self) -> None:
        """Show the editor the background tasks that ended, once no turn runs (a turn
        that runs takes its plan from the thread's state, which has not heard yet)."""
        if self._tasks_ended and not self.turns.busy and self._graph is not None:
            self._tasks_ended = False
            try:
                await self.handler.emit(PlanUpdated(await self.plan()))
            except Exception:
                log.exception("could not show the background tasks of session %s", self.id)

    async def make_thread(self) -> None:
        """Make the session's thread where it lives: on the server, with one (a server that
        cannot be reached is a `ServerUnavailable`)."""
        if self.server is not None:
            metadata = {"deepacp_session": self.record.id, "cwd": self.record.cwd}
            await self.server.create(self.record.thread_id, metadata)

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

    async def opening(self) -> list[Event]:
        """What `announce` says in a process that has not opened the session before (MCP
        servers aside)."""
        notice = self._sandbox_notice()
        return [CommandsChanged(await self.commands()), *([notice] if notice else [])]

    def _sandbox_notice(self) -> Notice | None:
        if self.remote is not None:
            return Notice(
                f"Files and commands are on {self.remote.runner.target}. Commands run "
                "there without a sandbox, as with the sandbox off: approvals are what "
                "guards them."
            )
        problem = sandbox_problem()
        if self.sandbox.policy == "off" or problem is None:
            return None
        return Notice(
            f"Commands are not sandboxed: {problem}. They run with your rights, and "
            "are asked about as before; `deepacp doctor` checks the set-up."
        )

    async def _report_sandbox(self) -> None:
        if self._sandbox_told or (notice := self._sandbox_notice()) is None:
            return
        self._sandbox_told = True
        await self.handler.emit(notice)

    async def set_sandbox(self, policy: SandboxPolicy) -> None:
        """Change the sandbox policy; the next command runs under it."""
        if self.remote is not None and policy != "off":
            raise ConfigError(
                f"commands on {self.remote.runner.target} cannot be sandboxed: there is no "
                "sandbox on a remote workspace, and each command is asked about instead"
            )
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
        if self.server is None:  # on a server the model (and its key) is the server's
            self.model_factory(spec)  # fail now, not at the next prompt
        self.record = self.store.update(self.record, model=spec)
        self._graph = None
        await self.handler.emit(ModelChanged(spec))

    @property
    def effort(self) -> Effort | None:
        """The effort the user chose for this session (None: the configured default)."""
        return cast("Effort | None", self.record.effort)

    def goal_rounds(self) -> int:
        """How many gradings a turn gets at most (config.toml's, else the default)."""
        try:
            return load_config(self.store.home).goal_rounds
        except ConfigError:
            return DEFAULT_GOAL_ROUNDS

    def set_goal(self, goal: str | None) -> None:
        """Set (or, with None, remove) what done looks like; checked from the next turn end.
        Without a goal the harness has no grader (the graph is rebuilt when that changes)."""
        if (goal is None) != (self.record.goal is None):
            self._graph, self._fresh_model = None, False
        self.record = self.store.update(self.record, goal=goal)

    async def set_effort(self, effort: Effort) -> None:
        """Change the reasoning effort; the graph is rebuilt on the next turn."""
        self.record = self.store.update(self.record, effort=effort)
        self._graph = None
        await self.handler.emit(EffortChanged(effort))

    async def history(self) -> list[Event]:
        """The events that redraw the conversation so far (read without building the
        agent: a replay needs neither the model nor the MCP servers), from the saved
        replay when it is still the thread's: then without the harness either."""
        key = self._replay_key()
        if self._replays is not None and (saved := self._replays.read(self.id, key)) is not None:
            return saved
        await self._harness_ready()
        from deepacp.harness.state import read_messages
        from deepacp.session import projection

        if self.server is not None:
            messages = await (await self.graph()).messages(self.config)
        else:
            messages = await read_messages(await self.store.checkpointer(), self.config)
        replayed = list(projection.replay(messages, self.backend))
        plan = await self.plan()
        if any(e.content.startswith(projection.BACKGROUND_ENTRY) for e in plan):
            # Where the background tasks stand now: never saved, it changes by itself.
            return [*replayed, PlanUpdated(plan)]
        if self._replays is not None and key == self._replay_key():  # no turn wrote meanwhile
            self._replays.save(self.id, key, replayed)
        return replayed

    def _forget_replay(self) -> None:
        """Drop the saved replay: the turns it shows were taken back."""
        if self._replays is not None:
            self._replays.forget(self.id)

    @property
    def extra_roots(self) -> tuple[str, ...]:
        """The workspace roots besides the session's folder (the editor's additional
        directories)."""
        return self._extra_roots

    def _replay_key(self) -> dict[str, Any] | None:
        if self._replays is None:
            return None
        return self._replays.key(self.record.thread_id, (self.record.cwd, *self._extra_roots))

    async def _save_replay(self) -> None:
        """Save the replay for the next process, if the conversation changed since."""
        if self._replays is None or self._replays.is_saved(self.id, self._replay_key()):
            return
        try:
            await self.history()
        except Exception:  # the next load reads it the long way
            log.debug("replay of session %s not saved", self.id, exc_info=True)

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
        if self.server is not None:
            raise ConfigError("/compact runs in-process only, not on a LangGraph server")
        graph = await self.graph()
        return bool(await self._summarizer.compact(graph, self.config, self._model))

    async def clear(self) -> None:
        """A fresh conversation in this session (the old thread is deleted)."""
        old = self.record.thread_id
        self.record = self.store.update(self.record, thread_id=uuid.uuid4().hex)
        if self.server is not None:
            await self.server.delete(old)
        else:
            await (await self.store.checkpointer()).adelete_thread(old)
        self.restore_points.truncate(0)  # their checkpoints went with the thread
        self._forget_replay()
        self.backend = self._backend()
        if self._review is not None:
            self._review.forget_all()
        self._graph = None

    async def fork(self) -> SessionRecord:
        """A new session with this one's conversation and restore points so far, titled
        "fork of …"; the two diverge from here."""
        self._on_this_machine("forked")
        title = f"fork of {self.record.title or 'Untitled'}"
        forked = await self.store.fork(self.record, title)
        self.restore_points.copy_to(forked.id, {self.record.thread_id: forked.thread_id})
        return forked

    def _on_this_machine(self, done: str) -> None:
        """Refuse, with a `DeepacpError`, what cannot be done yet to a session whose thread
        and files live on a LangGraph server (`--server`)."""
        if self.server is not None:
            raise DeepacpError(f"a session on a LangGraph server cannot be {done} yet")

    def prompts(self) -> list[RestorePoint]:
        """The prompts that can be rewound to, first to last."""
        return list(self.restore_points.points)

    def prompt_number(self, message_id: str) -> int | None:
        """The number (from 1) of the prompt with this id; None: no such prompt."""
        ids = [p.message_id for p in self.restore_points.points]
        return ids.index(message_id) + 1 if message_id in ids else None

    async def stop(self) -> None:
        """Cancel the running turn and the queued prompts, and wait until the turn has ended."""
        task = self._task
        await self.cancel()
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)

    async def rewind(self, number: int, *, force: bool = False, keep: bool = False) -> Restored:
        """Go back to before prompt `number` (from 1): its files and later ones as they were
        (created ones removed, deleted ones back) and the conversation as it was. Files the
        user changed since the agent did are conflicts: nothing happens unless `force`
        (restore them anyway) or `keep` (rewind the rest, keep the user's). The turns taken
        back stay in a fork of the session."""
        self._on_this_machine("rewound")
        points = self.restore_points.points[number - 1 :]
        found = await conflicts(self.backend, points)
        if found and not (force or keep):
            return Restored(conflicts=found)
        await stop_turn_tasks(
            self.background, {p.message_id for p in points}, REWOUND, self.handler
        )
        kept = await self.fork()
        done = await restore(
            self.backend, self.restore_points, points, set() if force else set(found)
        )
        done.fork = kept
        point = points[0]
        if point.checkpoint_id is None or point.thread_id != self.record.thread_id:
            await self.clear()
        else:
            graph = await self.graph()
            at = {
                "configurable": {"thread_id": point.thread_id, "checkpoint_id": point.checkpoint_id}
            }
            await graph.aupdate_state(at, None, as_node="__copy__")
        self.restore_points.truncate(number - 1)
        self._forget_replay()
        return done

    @property
    def running(self) -> bool:
        """A turn is running (or about to: a queued prompt takes over)."""
        return self.turns.busy

    async def prompt(self, content: str | list[dict]) -> StopReason:
        """Run one turn for the user's message (or a slash command); returns why it stopped.
        While another turn runs it waits for that turn to end (queued, in order); a cancel
        meanwhile answers it `cancelled` without running it."""
        if not await self.turns.claim(lambda: self.handler.emit(Notice(QUEUED))):
            return "cancelled"
        try:
            return await self._turn(content)
        finally:
            self.turns.release()
            await self._show_ended_tasks()

    async def _turn(self, content: str | list[dict]) -> StopReason:
        self.last_turn_usage, self.last_message_id = TokenUsage(), None
        known = len(self.restore_points.points)  # the turn's prompts come after these
        # The task covers the wait for the graph (and MCP start-up), so cancel works there too.
        self._task = task = asyncio.create_task(self._steered(content))
        try:
            return await task
        except (asyncio.CancelledError, TurnCancelled):
            if _being_cancelled():
                raise asyncio.CancelledError from None  # we are being stopped (shutdown)
            prompts = [p.message_id for p in self.restore_points.points[known:]]
            await stop_turn_tasks(self.background, prompts, CANCELLED, self.handler)
            return "cancelled"
        finally:
            self._task = None
            save_after_turn(self.id, self._save_replay)

    def start(self, content: str | list[dict]) -> asyncio.Task[StopReason] | None:
        """A turn no request waits for, taking the idle session at once (so a message
        steered right after joins it); None when a turn runs already."""
        if not self.turns.take():
            return None

        async def turn() -> StopReason:
            try:
                return await self._turn(content)
            finally:
                self.turns.release()
                await self._show_ended_tasks()

        return asyncio.create_task(turn())

    async def steer(self, content: str | list[dict]) -> bool:
        """Add the user's message to the running turn, at its next model call (the work in
        flight goes on); False when no turn runs. `user_prompt_submit` hooks judge it as
        they judge a prompt: refused, it is a `DeepacpError` saying why."""
        if not self.turns.busy:
            return False
        refused = await self.hooks.before_prompt(
            content if isinstance(content, str) else text_of(content)
        )
        if refused is not None:
            await self.handler.emit(Notice(f"A hook refused the message: {refused}"))
            raise DeepacpError(f"a hook refused the message: {refused}")
        return self.turns.steer(content)

    async def cancel(self) -> None:
        """Stop the running turn now, and drop the queued prompts and steered messages;
        `prompt` then answers `cancelled` for each."""
        self.turns.drop()
        if self._task is not None:
            self._task.cancel()

    async def _steered(self, content: str | list[dict]) -> StopReason:
        """The turn, continued while messages steered into it wait for a model call (one
        that arrived as the model was finishing, or during a slash command)."""
        stop = await self._dispatch(content)
        while steered := self.turns.steered():
            for later in steered[1:]:
                self.turns.steer(later)  # for that run's first model call
            stop = await self._run(steered[0])
        return stop

    async def _dispatch(self, content: str | list[dict]) -> StopReason:
        text = content if isinstance(content, str) else text_of(content[:1])
        whole = content if isinstance(content, str) else text_of(content)
        refused = await self.hooks.before_prompt(whole)
        if refused is not None:
            await self.handler.emit(Notice(f"A hook refused the prompt: {refused}"))
            return "refusal"
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
        graph = await self.graph()  # first: it waits for the harness thread to import these
        from deepacp.session.interrupts import InterruptResolver
        from deepacp.session.turn import Turn

        await self._report_sandbox()  # faces that announce nothing hear of it here
        resolver = InterruptResolver(self.policy, self.handler, self.backend, self.hooks)
        turn = Turn(
            graph,
            self.config,
            self.backend,
            self.handler,
            resolver,
            self._window,
            self.prices(),
            self.hooks.stopping,
            self._task_status,
        )
        state = await graph.aget_state(self.config)
        checkpoint = state.config.get("configurable", {}).get("checkpoint_id")
        prompt = title_from(content if isinstance(content, str) else text_of(content))
        self.last_message_id = self.restore_points.begin(prompt, self.record.thread_id, checkpoint)
        if self.record.title is None:
            self.record = self.store.update(self.record, title=prompt or "Untitled")
            await self.handler.emit(TitleChanged(self.record.title or ""))
        try:
            return await turn.run(content, state)
        finally:
            self.last_turn_usage = self.last_turn_usage + turn.usage
            self.record = self.store.update(self.record)
            await asyncio.shield(finish_turn(self.backend, self.restore_points))

    async def close(self) -> None:
        """End the session: its turn, its MCP connections, and what its graph holds (the
        model, middleware and tools), so a closed session costs no memory while a face
        still holds it."""
        await self.stop()
        self._task = None
        if self.background is not None:
            await self.background.close()  # its tasks end with it
        if self._graph is not None:  # a turn may have run: the next process loads faster
            await save_now(self.id, self._save_replay)
        self.restore_points.release()
        await self.mcp.close()
        await self.hooks.close()
        self._graph = self._model = self._summarizer = None
