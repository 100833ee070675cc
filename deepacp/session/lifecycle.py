"""SessionManager: the one owner of a process's sessions. It creates, opens (claims), lists,
closes and deletes them, starts their MCP servers and watches their skills; the faces only
translate between it and their wire protocol."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from deepacp.backends.atomic import keep_write_journal
from deepacp.backends.protocol import Backend
from deepacp.backends.remote import RemoteBackend
from deepacp.backends.runners import Runner, parse_remote, runner_for
from deepacp.backends.sandbox import DEFAULT_POLICY, SandboxPolicy, SandboxSetting
from deepacp.config import Effort
from deepacp.errors import RemoteUnavailable, SessionNotFound, WrongWorkspace
from deepacp.profile_setting import configured_profile
from deepacp.session.core import Session
from deepacp.session.handler import SessionHandler
from deepacp.session.hosts import Host
from deepacp.session.hosts.langgraph import ServerHost
from deepacp.session.hosts.local import Facts, LocalHost, ModelFactory, Ready, asked_facts, no_wait
from deepacp.session.hosts.threads import ServerThreads
from deepacp.session.mcp import McpServer
from deepacp.session.modes import Mode
from deepacp.session.parts.background import BackgroundPart
from deepacp.session.parts.base import Part
from deepacp.session.parts.goal import GoalPart
from deepacp.session.parts.hooks import HooksPart
from deepacp.session.parts.mcp import McpPart
from deepacp.session.parts.permissions import PermissionsPart
from deepacp.session.parts.profile import ProfilePart
from deepacp.session.parts.replays import ReplaysPart
from deepacp.session.parts.restore import RestorePart
from deepacp.session.parts.review import ReviewPart
from deepacp.session.parts.sandbox import SandboxPart
from deepacp.session.parts.server import ServerPart
from deepacp.session.parts.title import TitlePart
from deepacp.session.replays import Replays, replays_of
from deepacp.session.restore import RestorePoints, discard
from deepacp.session.storage.ephemeral import EphemeralRecords
from deepacp.session.storage.permissions import WorkspaceRules
from deepacp.session.storage.records import Records, SessionRecord, Store
from deepacp.session.turns.approvals import ApprovalPolicy, runs_code_later
from deepacp.session.workspace import (
    ReviewSource,
    WorkspaceView,
    session_backend,
    watched_skill_dirs,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Workspace:
    """Where a session works, as the face was told: the root, more roots, the MCP servers
    to connect, how the files are seen (through the editor, as an overlay), where the
    model hears what the user did to its changes in review — or the remote checkout that
    stands instead of the root (`RemoteBackend`)."""

    cwd: str
    extra_roots: tuple[str, ...] = ()
    mcp_servers: tuple[McpServer, ...] = ()
    view: WorkspaceView | None = None
    review: ReviewSource | None = None
    remote: RemoteBackend | None = None


class SessionManager:
    def __init__(
        self,
        store: Store,
        model_factory: ModelFactory,
        *,
        planning: bool = True,
        harness_ready: Ready = no_wait,
        sandbox: SandboxPolicy = DEFAULT_POLICY,
        server: ServerThreads | None = None,
        remote: str | None = None,
        profile: str | None = None,
        server_facts: Facts = asked_facts,
    ) -> None:
        """`server`: the LangGraph server sessions run on; `remote`: the URL of the remote
        checkout every session works on (None: the local folder); `profile`: the --profile
        flag (None: `DEEPACP_PROFILE`, then config.toml); `server_facts`: what a model's
        server says about itself, which chooses the profile when the user did not."""
        self.store = store
        keep_write_journal(store.home / "writes")  # and clean up after a killed process
        self.server = server
        """The LangGraph server sessions run on (None: in this process)."""
        self.model_factory = model_factory
        self.planning = planning
        self.sandbox = sandbox
        """The sandbox policy new sessions start with."""
        self.harness_ready = harness_ready
        self.remote = remote
        self.profile = profile
        self.server_facts = server_facts
        self._runner: Runner | None = None
        """The connection to the remote machine, shared by its sessions."""
        self._reached: RemoteBackend | None = None
        self.sessions: dict[str, Session] = {}
        self._watchers: dict[str, asyncio.Task] = {}

    def records(self, cwd: str | None = None) -> list[SessionRecord]:
        """The stored sessions (of the workspace `cwd`), most recently used first — those
        that never got a prompt (untitled: a session is titled by its first) after all the
        others, so a picker leads with the conversations there are."""
        found = self.store.list(str(Path(cwd)) if cwd else None)
        return sorted(found, key=lambda record: record.title is None)  # stable: used order kept

    def record(self, session_id: str, cwd: str | None = None) -> SessionRecord:
        """The stored session `session_id` (of the workspace `cwd`, when given)."""
        record = self.store.get(session_id)
        if record is None:
            raise SessionNotFound(f"no session {session_id}")
        if cwd is not None and Path(cwd).resolve() != Path(record.cwd).resolve():
            raise WrongWorkspace(f"session {session_id} belongs to {record.cwd}, not {cwd}")
        return record

    def new_record(
        self,
        cwd: str,
        mode: Mode,
        model: str,
        effort: Effort | None = None,
        goal: str | None = None,
    ) -> SessionRecord:
        """A new stored session, to `open` (`goal`: what done looks like, see `/goal`)."""
        return self.store.create(cwd, mode, model, effort, goal)

    def open(
        self,
        record: SessionRecord,
        workspace: Workspace,
        handler: SessionHandler,
        background: bool = True,
    ) -> Session:
        """The session of `record`, claimed for this process (`SessionInUse` if another
        process has it). Opening an open session returns it as it is. `background`: the
        agent may start background tasks in this process."""
        if (session := self.sessions.get(record.id)) is not None:
            return session
        workspace = self._where(workspace)
        self.store.claim(record.id)
        session = self._session(record, self.store, workspace, handler, background)
        self.sessions[record.id] = session
        self._watchers[record.id] = asyncio.create_task(self._watch_skills(session))
        return session

    async def reach(self) -> None:
        """Check that the remote checkout answers before a session opens on it (a
        `RemoteUnavailable` says why not); without one, nothing to do."""
        if self.remote is not None:
            target = parse_remote(self.remote)
            self._runner = self._runner or runner_for(target)
            self._reached = await RemoteBackend.connect(target, self._runner)

    def _where(self, workspace: Workspace) -> Workspace:
        """`workspace` as the session sees it: on the remote checkout (reached already),
        and through the editor's view only where the editor has the files."""
        if self.remote is not None and self._reached is None:
            raise RemoteUnavailable(
                f"{self.remote} has not been reached yet: open the session with "
                "session/load or session/resume"
            )
        if self._reached is not None or self.server is not None:
            return replace(workspace, view=None, remote=self._reached)
        return workspace

    async def make_thread(self, session: Session) -> None:
        """Make a new session's thread where it lives: on the server, with one (a server
        that cannot be reached is a `ServerUnavailable`)."""
        await session.host.make_thread(session.record)

    def get(self, session_id: str) -> Session | None:
        return self.sessions.get(session_id)

    @contextlib.asynccontextmanager
    async def ephemeral(
        self, workspace: Workspace, mode: Mode, model: str, handler: SessionHandler
    ) -> AsyncIterator[Session]:
        """A session that is never stored or listed and leaves nothing behind (so it
        offers no background tasks: they would end with it)."""
        records = EphemeralRecords(self.store.home)
        session = self._session(
            records.record(workspace.cwd, mode, model), records, workspace, handler, False
        )
        try:
            yield session
        finally:
            await session.close()
            records.discard()
            discard(self.store.home, session.id)

    def _session(
        self,
        record: SessionRecord,
        records: Records,
        workspace: Workspace,
        handler: SessionHandler,
        background: bool = True,
    ) -> Session:
        """A session of `record` with its host and every part, in their order."""
        host: Host
        if self.server is not None:
            host = ServerHost(self.server)
        else:
            host = LocalHost(
                records, self.model_factory, self.harness_ready, self.planning, self.server_facts
            )
        here = self.server is None
        remote = workspace.remote
        setting = SandboxSetting(
            "off" if remote is not None else self.sandbox, unasked=record.mode == "accept-edits"
        )
        policy = ApprovalPolicy(mode=record.mode, breach=setting.breach)
        policy.sandbox = lambda: setting.effective
        restore = RestorePart(RestorePoints(records.home, record.id, Path(record.cwd).resolve()))

        def backend_for(now: SessionRecord) -> Backend:
            return session_backend(
                now.cwd,
                records.scratch_dir(now.thread_id),
                records.home,
                view=workspace.view,
                extra_roots=workspace.extra_roots,
                sandbox=setting,
                recorded=restore.recorded,
                remote=remote,
            )

        kept = not isinstance(records, EphemeralRecords)  # an ephemeral one remembers nothing
        parts: list[Part] = [
            McpPart(workspace.mcp_servers, self.harness_ready),
            TitlePart(),
            SandboxPart(setting, str(remote.runner.target) if remote is not None else None),
            ServerPart(here),
            HooksPart(setting, here),
            ReviewPart(workspace.review),
            GoalPart(),
            BackgroundPart(background, here),
            restore,
            PermissionsPart(WorkspaceRules(records.home, record.cwd) if kept else None),
            ReplaysPart(replays_of(records, self.server, remote)),
            ProfilePart(configured_profile(self.profile)),
        ]
        session = Session(
            record, records, handler, host, parts, policy, backend_for, workspace.extra_roots
        )
        policy.runs_code_later = lambda path: runs_code_later(session.ctx.backend, path)
        return session

    async def _watch_skills(self, session: Session) -> None:
        """Announce the slash commands again when a skill folder changes on disk."""
        folders = watched_skill_dirs(session.record.cwd, self.store.home)
        if not folders:
            return
        import watchfiles

        async for _ in watchfiles.awatch(*folders, debounce=300):
            try:
                await session.refresh_commands()
            except Exception:
                log.exception("could not refresh the commands of session %s", session.id)

    async def close(self, session_id: str) -> bool:
        """Close an open session (its turn, MCP servers, watcher); False if it was not open."""
        watcher = self._watchers.pop(session_id, None)
        if watcher is not None:
            watcher.cancel()
        session = self.sessions.pop(session_id, None)
        if session is not None:
            await session.close()
        self.store.release(session_id)
        return session is not None

    async def delete(self, session_id: str) -> None:
        """Delete a session and its history; one that does not exist is no error."""
        record = self.store.get(session_id)
        if record is None:
            return
        await self.close(session_id)
        await self.store.delete(record)
        discard(self.store.home, session_id)
        Replays(self.store.home).forget(session_id)
        if self.server is not None:
            await self.server.delete(record.thread_id)

    async def shutdown(self) -> None:
        """Close every open session, side by side, their MCP servers told to stop from the
        start (a process that is ending has little time), then the store."""
        sessions = list(self.sessions.values())
        closing: list[Awaitable[Any]] = [self.close(s.id) for s in sessions]
        closing += [s.part(McpPart).connections.close() for s in sessions]
        for failure in await asyncio.gather(*closing, return_exceptions=True):
            if isinstance(failure, Exception):
                log.warning("a session did not close cleanly: %s", failure, exc_info=failure)
        await self.store.close()
        if self._runner is not None:
            await self._runner.close()
