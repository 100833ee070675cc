"""The ACP agent: thin handlers from ACP requests to sessions, and sessions' events back."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import schema as S
from acp.agent.router import build_agent_router
from acp.connection import Connection
from acp.exceptions import RequestError
from acp.meta import CLIENT_METHODS
from acp.utils import notify_model

from deepacp.acp import updates
from deepacp.acp.capabilities import AUTH_METHOD, SETUP_METHOD, initialize_result
from deepacp.acp.client import AcpEditorClient, AcpSessionHandler
from deepacp.acp.transport import StdioTransport
from deepacp.config import ServerOptions, deepacp_home, load_config
from deepacp.errors import (
    ConfigError,
    DeepacpError,
    ModelConfigError,
    SessionBusy,
    SessionInUse,
    TurnError,
)
from deepacp.events import Notice
from deepacp.harness.skills import discover_skills
from deepacp.models import check_provider, configured_spec, resolve_model
from deepacp.session.approvals import DEFAULT_MODE, MODE_IDS
from deepacp.session.commands import available_commands
from deepacp.session.mcp import McpServer
from deepacp.session.store import SessionRecord, SessionStore
from deepacp.session.workspace import (
    SKILL_SOURCES,
    session_backend,
    through_editor,
    watched_skill_dirs,
)

if TYPE_CHECKING:
    from concurrent.futures import Future

    from deepacp.session.runtime import Session

log = logging.getLogger(__name__)


def _not_found(session_id: str) -> RequestError:
    return RequestError(
        -32002, f"Resource not found: no session {session_id}", {"sessionId": session_id}
    )


def _bad_params(message: str) -> RequestError:
    return RequestError(-32602, f"Invalid params: {message}")


def to_mcp_servers(servers: list[Any] | None) -> list[McpServer]:
    """The client's MCP server configs, in the session runtime's terms."""
    out = []
    for server in servers or []:
        if isinstance(server, S.McpServerStdio):
            env = tuple((v.name, v.value) for v in server.env)
            out.append(McpServer(server.name, "stdio", server.command, tuple(server.args), env))
        elif isinstance(server, S.HttpMcpServer | S.SseMcpServer):
            headers = tuple((h.name, h.value) for h in server.headers)
            out.append(McpServer(server.name, server.type, url=server.url, headers=headers))
    return out


def _roots(cwd: str, directories: list[str] | None) -> tuple[str, ...]:
    roots = []
    for directory in directories or []:
        path = Path(directory)
        if not path.is_absolute() or not path.is_dir():
            raise _bad_params(f"additional directory {directory!r} is not an absolute directory")
        if path.resolve() != Path(cwd).resolve():
            roots.append(str(path))
    return tuple(roots)


class DeepacpAgent:
    """Implements the ACP agent methods deepacp advertises; nothing else is routed."""

    conn: Connection  # set once the connection exists (it needs this agent's handler)

    def __init__(
        self, client_params: dict, options: ServerOptions, harness_loaded: Future | None = None
    ) -> None:
        self.harness_loaded = harness_loaded
        self.client_capabilities = S.ClientCapabilities.model_validate(
            client_params.get("clientCapabilities") or {}
        )
        self.options = options
        self.store = SessionStore(deepacp_home())
        self.sessions: dict[str, Session] = {}
        self._workspaces: dict[str, tuple[tuple[str, ...], list[McpServer]]] = {}
        self._watchers: dict[str, asyncio.Task] = {}
        self._commands: dict[str, tuple] = {}  # the command list each client last saw
        self._background: set[asyncio.Task] = set()
        self._opening: dict[str, bool] = {}  # session a prompt waits for -> cancelled since

    # -- lifecycle -------------------------------------------------------------------

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, **_: Any):
        if client_capabilities is not None:
            self.client_capabilities = client_capabilities
        params = {
            "protocolVersion": protocol_version,
            "clientCapabilities": self.client_capabilities.model_dump(by_alias=True),
        }
        return S.InitializeResponse.model_validate(initialize_result(params))

    async def authenticate(self, method_id: str, **_: Any) -> S.AuthenticateResponse:
        """Checks that the configured model is usable (package, key) without calling it."""
        if method_id == SETUP_METHOD:
            raise _bad_params(
                f"{SETUP_METHOD!r} runs in a terminal: start deepacp with `setup` there, "
                "then reconnect"
            )
        if method_id != AUTH_METHOD:
            raise _bad_params(f"unknown auth method {method_id!r}; use {AUTH_METHOD!r}")
        self._resolve_spec(None)
        return S.AuthenticateResponse()

    def _model_choices(self, current: str) -> list[str]:
        """The session's model, the configured default (which may have changed since the
        session was made) and the config.toml list."""
        try:
            default = [configured_spec(self.options.model)]
        except ModelConfigError:
            default = []
        return list(dict.fromkeys([current, *default, *load_config().models]))

    def _resolve_spec(self, spec: str | None) -> str:
        try:
            spec = configured_spec(spec or self.options.model)
            check_provider(spec)
        except ConfigError as exc:  # no model, or a config or credentials file to fix
            raise RequestError(-32000, str(exc)) from None
        return spec

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _open(self, record: SessionRecord) -> Session:
        session = self.sessions.get(record.id)
        if session is None:
            self._claim(record.id)
            if self.harness_loaded is not None:  # imported in the background at start-up
                await asyncio.wrap_future(self.harness_loaded)
            from deepacp.session.runtime import Session

            session = self.sessions.get(record.id)  # opened while we waited?
            if session is None:
                extra_roots, servers = self._workspaces.get(record.id, ((), []))
                editor = AcpEditorClient(self.conn, record.id, self.client_capabilities)
                handler = AcpSessionHandler(
                    self.conn,
                    record.id,
                    self.client_capabilities,
                    lambda: self._session_state(self.sessions[record.id].record)["config_options"],
                )
                session = Session(
                    record,
                    self.store,
                    handler,
                    resolve_model,
                    planning=self.options.planning,
                    view=through_editor(editor) if editor.useful else None,
                    extra_roots=extra_roots,
                    mcp_servers=servers,
                )
                self.sessions[record.id] = session
                self._watch_skills(session)
        return session

    def _claim(self, session_id: str) -> None:
        try:
            self.store.claim(session_id)
        except SessionInUse as exc:
            raise RequestError(-32000, str(exc)) from None

    def _record(self, session_id: str, cwd: str | None = None) -> SessionRecord:
        record = self.store.get(session_id)
        if record is None:
            raise _not_found(session_id)
        if cwd is not None and Path(cwd).resolve() != Path(record.cwd).resolve():
            raise _bad_params(f"session {session_id} belongs to {record.cwd}, not {cwd}")
        return record

    async def _session(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            session = await self._open(self._record(session_id))
        return session

    def _session_state(self, record: SessionRecord) -> dict[str, Any]:
        spec = record.model or ""
        return {
            "modes": updates.mode_state(record.mode),
            "config_options": updates.config_options(record.mode, spec, self._model_choices(spec)),
        }

    async def _start_updates(self, record: SessionRecord) -> None:
        """The session-start updates, once per new, load or resume: the slash commands,
        then any MCP server that failed. After session/new they must follow the response
        (Zed drops updates that arrive before it); after session/load they precede it
        (nothing may arrive after a load's response)."""
        try:
            scratch = self.store.scratch_dir(record.thread_id)
            backend = session_backend(record.cwd, scratch, self.store.home)
            index = await discover_skills(backend, SKILL_SOURCES)
            listed = available_commands(index.skills.values())
            self._commands[record.id] = listed
            await self._notify(record.id, updates.commands_update(listed))
            session = await self._open(record)
            await session.mcp.ready()
            for server, reason in session.mcp.failures:
                notice = Notice(f"MCP server {server!r} is not available: {reason}")
                await self._notify(record.id, updates.to_update(notice))
            session.mcp.failures.clear()
        except Exception:
            log.exception("session start-up updates failed for %s", record.id)

    async def _notify(self, session_id: str, update: Any) -> None:
        await notify_model(
            self.conn,
            CLIENT_METHODS["session_update"],
            S.SessionNotification(session_id=session_id, update=update),
        )

    async def _refresh_commands(self, session: Session) -> None:
        """Send the command list again if it changed since the client last saw it (the
        first one goes with the session-start updates)."""
        if session.id not in self._commands:
            return
        listed = await session.commands()
        if self._commands.get(session.id) != listed:
            self._commands[session.id] = listed
            await self._notify(session.id, updates.commands_update(listed))

    def _watch_skills(self, session: Session) -> None:
        """Refresh the command list when skill folders change on disk."""
        folders = watched_skill_dirs(session.record.cwd, self.store.home)

        async def watch() -> None:
            await self._refresh_commands(session)  # whatever changed before we watched
            if not folders:
                return
            import watchfiles

            async for _ in watchfiles.awatch(*folders, debounce=300):
                try:
                    await self._refresh_commands(session)
                except Exception:
                    log.exception("could not refresh the commands of session %s", session.id)

        self._watchers[session.id] = asyncio.create_task(watch())

    async def _forget(self, session_id: str) -> Session | None:
        self._commands.pop(session_id, None)
        watcher = self._watchers.pop(session_id, None)
        if watcher is not None:
            watcher.cancel()
        session = self.sessions.pop(session_id, None)
        if session is not None:
            await session.close()
        self.store.release(session_id)
        return session

    async def new_session(
        self, cwd: str, mcp_servers: Any = None, additional_directories: Any = None, **_: Any
    ) -> S.NewSessionResponse:
        path = Path(cwd)
        if not path.is_absolute() or not path.is_dir():
            raise _bad_params(f"cwd must be an absolute path to a directory, got {cwd!r}")
        roots = _roots(cwd, additional_directories)
        spec = self._resolve_spec(None)
        record = self.store.create(str(path), DEFAULT_MODE, spec)
        self._claim(record.id)
        self._workspaces[record.id] = (roots, to_mcp_servers(mcp_servers))
        self._spawn(self._start_updates(record))
        return S.NewSessionResponse(session_id=record.id, **self._session_state(record))

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: Any = None,
        additional_directories: Any = None,
        **_: Any,
    ) -> S.LoadSessionResponse:
        record = self._record(session_id, cwd)
        self._workspaces[record.id] = (
            _roots(cwd, additional_directories),
            to_mcp_servers(mcp_servers),
        )
        session = await self._open(record)
        if session.running:
            raise RequestError(-32603, "Internal error: the session is running a turn")
        try:
            history = await session.history()
        except DeepacpError as exc:
            raise RequestError(-32000, str(exc)) from None
        for event in history:
            await session.handler.emit(event)
        await self._start_updates(session.record)
        return S.LoadSessionResponse(**self._session_state(session.record))

    async def resume_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: Any = None,
        additional_directories: Any = None,
        **_: Any,
    ) -> S.ResumeSessionResponse:
        record = self._record(session_id, cwd)
        self._workspaces[record.id] = (
            _roots(cwd, additional_directories),
            to_mcp_servers(mcp_servers),
        )
        session = await self._open(record)
        self._spawn(self._start_updates(session.record))
        return S.ResumeSessionResponse(**self._session_state(session.record))

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None, **_: Any):
        records = self.store.list(str(Path(cwd)) if cwd else None)
        return S.ListSessionsResponse(
            sessions=[
                S.SessionInfo(session_id=r.id, cwd=r.cwd, title=r.title, updated_at=r.updated_at)
                for r in records
            ]
        )

    async def close_session(self, session_id: str, **_: Any) -> S.CloseSessionResponse:
        if await self._forget(session_id) is None:
            self._record(session_id)
        return S.CloseSessionResponse()

    async def delete_session(self, params: Any) -> dict:
        """Delete a session; one that does not exist (say, already deleted) is no error."""
        request = S.DeleteSessionRequest.model_validate(params)
        record = self.store.get(request.session_id)
        if record is None:
            return {}
        await self._forget(record.id)
        self._claim(record.id)
        await self.store.delete(record)
        return {}

    async def logout(self, params: Any) -> dict:
        """Forget the API keys `deepacp setup` stored (keys in the environment are the
        editor's settings, not ours to forget)."""
        from deepacp.credentials import forget_keys

        try:
            forget_keys()
        except DeepacpError as exc:
            raise RequestError(-32000, str(exc)) from None
        return {}

    # -- modes and models ------------------------------------------------------------

    async def _announce_state(self, session: Session, mode_changed: bool) -> None:
        handler = session.handler
        assert isinstance(handler, AcpSessionHandler)
        if mode_changed:
            await handler.update(
                S.CurrentModeUpdate(
                    session_update="current_mode_update", current_mode_id=session.policy.mode
                )
            )
        await handler.update(
            S.ConfigOptionUpdate(
                session_update="config_option_update",
                config_options=self._session_state(session.record)["config_options"],
            )
        )

    def _set_mode(self, session: Session, mode_id: str) -> None:
        if mode_id not in MODE_IDS:
            raise _bad_params(f"unknown mode {mode_id!r}; the modes are {', '.join(MODE_IDS)}")
        session.set_mode(mode_id)  # type: ignore[arg-type]

    async def set_session_mode(self, session_id: str, mode_id: str, **_: Any):
        session = await self._session(session_id)
        self._set_mode(session, mode_id)
        await self._announce_state(session, mode_changed=True)
        return S.SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: Any, **_: Any):
        session = await self._session(session_id)
        if config_id == "mode":
            self._set_mode(session, str(value))
        elif config_id == "model":
            spec = self._resolve_spec(str(value))
            try:
                session.set_model(spec)
            except DeepacpError as exc:
                raise RequestError(-32000, str(exc)) from None
        else:
            raise _bad_params(f"unknown config option {config_id!r}")
        await self._announce_state(session, mode_changed=config_id == "mode")
        return S.SetSessionConfigOptionResponse(
            config_options=self._session_state(session.record)["config_options"]
        )

    # -- turns -----------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> S.PromptResponse:
        self._opening.setdefault(session_id, False)
        try:
            session = await self._session(session_id)  # may wait for the harness to load
        finally:
            cancelled = self._opening.pop(session_id, False)
        if cancelled:  # the user pressed stop while the session was still opening
            return S.PromptResponse(stop_reason="cancelled")
        content = updates.prompt_content(prompt, session.record.cwd)
        try:
            stop = await session.prompt(content)
        except (SessionBusy, TurnError) as exc:
            raise RequestError(-32603, f"Internal error: {exc}") from None
        except DeepacpError as exc:
            raise RequestError(-32000, str(exc)) from None
        return S.PromptResponse(
            stop_reason=stop, field_meta=updates.turn_meta(session.last_turn_tokens)
        )

    async def cancel(self, session_id: str, **_: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            await session.cancel()
        elif session_id in self._opening:
            self._opening[session_id] = True

    async def shutdown(self) -> None:
        for task in [*self._background, *self._watchers.values()]:
            task.cancel()
        for session in list(self.sessions.values()):
            with contextlib.suppress(Exception):
                await session.close()
        await self.store.close()


def make_handler(agent: DeepacpAgent) -> Any:
    """The SDK's router for the standard methods, plus the ones it does not route."""
    router = build_agent_router(agent, use_unstable_protocol=True)  # type: ignore[arg-type]
    extra = {"session/delete": agent.delete_session, "logout": agent.logout}

    async def handle(method: str, params: Any, is_notification: bool) -> Any:
        try:
            if method in extra and not is_notification:
                return await extra[method](params)
            if method == "$/cancel_request":
                return None  # a client may cancel a request it sent; ours finish promptly
            return await router(method, params, is_notification)
        except DeepacpError as exc:  # one readable line (a corrupt store, say), not a trace
            raise RequestError(-32000, str(exc)) from None

    return handle


async def run_connection(
    transport: StdioTransport,
    client_params: dict,
    options: ServerOptions,
    harness_loaded: Future | None = None,
) -> None:
    """Serve ACP on an already-initialized transport until the client goes away."""
    agent = DeepacpAgent(client_params, options, harness_loaded)
    conn = agent.conn = Connection(make_handler(agent), transport, listening=False)
    try:
        await conn.main_loop()
    finally:
        await agent.shutdown()
        with contextlib.suppress(Exception):
            await asyncio.shield(conn.close())
