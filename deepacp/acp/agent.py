"""The ACP agent: thin handlers from ACP requests to the session manager, and errors back
as JSON-RPC errors. Sessions' events reach the client through `client.AcpSessionHandler`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from concurrent.futures import Future
from pathlib import Path
from typing import Any, cast

from acp import schema as S
from acp.agent.router import build_agent_router
from acp.connection import Connection
from acp.exceptions import RequestError
from acp.interfaces import Client

from deepacp.acp import rewind, steering, updates
from deepacp.acp.capabilities import (
    AUTH_METHOD,
    EDIT_PROMPT_METHOD,
    REWIND_METHOD,
    SETUP_METHOD,
    initialize_result,
)
from deepacp.acp.client import AcpEditorClient, AcpSessionHandler
from deepacp.acp.lifetime import Lifetime
from deepacp.acp.quickload import QuickLoad, Transcripts
from deepacp.acp.transport import StdioTransport
from deepacp.backends.editor_review import EditorReview
from deepacp.backends.sandbox import (
    DEFAULT_POLICY,
    SandboxPolicy,
    parse_policy,
    sandbox_problem,
)
from deepacp.config import (
    ServerOptions,
    deepacp_home,
    load_config,
    parse_effort,
    sandbox_policy,
)
from deepacp.effort import EffortChoice, effort_choice
from deepacp.errors import (
    ConfigError,
    DeepacpError,
    ModelConfigError,
    SessionBusy,
    SessionNotFound,
    TurnError,
    WrongWorkspace,
)
from deepacp.events import CommandsChanged, ModeChanged, Notice
from deepacp.models import check_provider, configured_spec, resolve_model, split_spec
from deepacp.session.core import Session
from deepacp.session.hosts.local import no_wait
from deepacp.session.hosts.threads import ServerThreads
from deepacp.session.lifecycle import SessionManager, Workspace
from deepacp.session.mcp import McpServer
from deepacp.session.modes import DEFAULT_MODE, parse_mode
from deepacp.session.parts.restore import RestorePart
from deepacp.session.parts.sandbox import SandboxPart
from deepacp.session.store import SessionRecord, SessionStore, Store, open_store
from deepacp.session.workspace import through_editor

log = logging.getLogger(__name__)

McpServers = list[S.HttpMcpServer | S.SseMcpServer | S.AcpMcpServer | S.McpServerStdio]
PromptBlocks = list[
    S.TextContentBlock
    | S.ImageContentBlock
    | S.AudioContentBlock
    | S.ResourceContentBlock
    | S.EmbeddedResourceContentBlock
]


def request_error(exc: DeepacpError) -> RequestError:
    """The JSON-RPC error for one of our errors: its message, one readable line."""
    if isinstance(exc, SessionNotFound):
        return RequestError(-32002, f"Resource not found: {exc}")
    if isinstance(exc, WrongWorkspace):
        return _bad_params(str(exc))
    if isinstance(exc, SessionBusy | TurnError):
        return RequestError(-32603, f"Internal error: {exc}")
    return RequestError(-32000, str(exc))


def _bad_params(message: str) -> RequestError:
    return RequestError(-32602, f"Invalid params: {message}")


def _start_policy(flag: SandboxPolicy | None) -> SandboxPolicy:
    """The policy sessions start with; a broken config.toml (reported where the model is
    read) leaves the default, never `off`."""
    try:
        return sandbox_policy(flag)
    except ConfigError:
        return sandbox_policy(flag or DEFAULT_POLICY)


def _sandbox_choice(value: object) -> SandboxPolicy:
    """A policy the user may pick here: any where bubblewrap works, else only `off`."""
    try:
        policy = parse_policy(value)
    except ValueError as exc:
        raise _bad_params(str(exc)) from None
    if policy != "off" and (problem := sandbox_problem()) is not None:
        raise _bad_params(f"no sandbox is available here: {problem}")
    return policy


def to_mcp_servers(servers: McpServers | None) -> tuple[McpServer, ...]:
    """The client's MCP server configs, in the session runtime's terms."""
    out = []
    for server in servers or []:
        if isinstance(server, S.McpServerStdio):
            env = tuple((v.name, v.value) for v in server.env)
            out.append(McpServer(server.name, "stdio", server.command, tuple(server.args), env))
        elif isinstance(server, S.HttpMcpServer | S.SseMcpServer):
            headers = tuple((h.name, h.value) for h in server.headers)
            out.append(McpServer(server.name, server.type, url=server.url, headers=headers))
    return tuple(out)


def _dump(response: S.LoadSessionResponse) -> dict:
    """A response as the SDK writes it."""
    return response.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_unset=True)


def _commands(updates: list[dict], wanted: bool = True) -> list[dict]:
    """The slash-command updates among `updates` (`wanted=False`: the others)."""
    return [u for u in updates if (u.get("sessionUpdate") == "available_commands_update") == wanted]


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
    """Implements the ACP agent methods deepacp advertises (`acp.interfaces.Agent`);
    the ones it does not offer answer "method not found"."""

    conn: Connection  # set once the connection exists (it needs this agent's handler)

    def __init__(
        self,
        client_params: dict,
        options: ServerOptions,
        harness_loaded: Future | None = None,
        store: Store | None = None,
    ) -> None:
        self.client_capabilities = S.ClientCapabilities.model_validate(
            client_params.get("clientCapabilities") or {}
        )
        self.options = options

        ready = no_wait
        if harness_loaded is not None:  # imported in a background thread at start-up
            loaded = asyncio.wrap_future(harness_loaded)

            async def ready() -> None:
                start = getattr(harness_loaded, "start", None)
                if start is not None:  # needed now (see deepacp.acp.server.HarnessImport)
                    start()
                await asyncio.shield(loaded)  # a cancelled waiter must not cancel the import

        store = store or open_store(deepacp_home())
        self.manager = SessionManager(
            store,
            resolve_model,
            planning=options.planning,
            harness_ready=ready,
            sandbox=_start_policy(options.sandbox),
            server=ServerThreads(options.server) if options.server else None,
            remote=options.remote,
        )
        self._background: set[asyncio.Task] = set()
        self._transcripts = (
            Transcripts(store.home, options, client_params)
            if isinstance(store, SessionStore) and not options.server and not options.remote
            else None
        )
        """What loads sent, for a fresh process to answer the next load at once (None:
        the sessions here are not loaded that way)."""

    def on_connect(self, conn: Client) -> None:
        return None  # the connection is made for us (`run_connection`)

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: S.ClientCapabilities | None = None,
        client_info: S.Implementation | None = None,
        **_: Any,
    ) -> S.InitializeResponse:
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

    async def logout(self, params: Any) -> dict:
        """Forget the API keys `deepacp setup` stored (keys in the environment are the
        editor's settings, not ours to forget)."""
        from deepacp.credentials import forget_keys

        forget_keys()
        return {}

    def _resolve_spec(self, spec: str | None) -> str:
        """The model spec to use, checked; on a server, where the keys and packages are
        the server's, as given ("": the server's own model)."""
        if self.options.server:
            with contextlib.suppress(ModelConfigError):
                return configured_spec(spec or self.options.model)
            return ""
        spec = configured_spec(spec or self.options.model)
        check_provider(spec)
        return spec

    def _model_choices(self, current: str) -> list[str]:
        """The session's model, the configured default (which may have changed since the
        session was made) and the config.toml list."""
        try:
            default = [configured_spec(self.options.model)]
        except ModelConfigError:
            default = []
        return list(dict.fromkeys([current, *default, *load_config().models]))

    def _effort(self, record: SessionRecord) -> EffortChoice | None:
        """The session's effort levels and the one in effect (None: the model has none)."""
        try:
            provider, name = split_spec(record.model or "")
        except ModelConfigError:
            return None
        wanted = record.effort or load_config().effort
        return effort_choice(provider, name, wanted)  # type: ignore[arg-type]

    def _state(self, session: Session) -> dict[str, Any]:
        """The modes and config options a session response carries."""
        record = session.record
        spec = record.model or ""
        options = updates.config_options(
            record.mode, spec, self._model_choices(spec), self._effort(record)
        )
        options.append(updates.sandbox_option(session.part(SandboxPart).policy, sandbox_problem()))
        return {"modes": updates.mode_state(record.mode), "config_options": options}

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _open(
        self,
        record: SessionRecord,
        mcp_servers: McpServers | None = None,
        directories: list[str] | None = None,
    ) -> Session:
        if (session := self.manager.get(record.id)) is not None:
            return session
        editor = AcpEditorClient(self.conn, record.id, self.client_capabilities)
        review = EditorReview(editor) if editor.can_write else None
        workspace = Workspace(
            record.cwd,
            _roots(record.cwd, directories),
            to_mcp_servers(mcp_servers),
            through_editor(editor, review) if editor.useful else None,
            review,
        )

        def config_options() -> list[Any]:
            return self._state(self.manager.sessions[record.id])["config_options"]

        handler = AcpSessionHandler(self.conn, record.id, self.client_capabilities, config_options)
        return self.manager.open(record, workspace, handler)

    def _session(self, session_id: str) -> Session:
        return self.manager.get(session_id) or self._open(self.manager.record(session_id))

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: McpServers | None = None,
        **_: Any,
    ) -> S.NewSessionResponse:
        path = Path(cwd)
        if not path.is_absolute() or not path.is_dir():
            raise _bad_params(f"cwd must be an absolute path to a directory, got {cwd!r}")
        _roots(cwd, additional_directories)  # bad ones refused before anything is stored
        await self.manager.reach()  # an unreachable one is refused before anything is stored
        record = self.manager.new_record(str(path), DEFAULT_MODE, self._resolve_spec(None))
        session = self._open(record, mcp_servers, additional_directories)
        try:
            await self.manager.make_thread(session)
        except DeepacpError:
            with contextlib.suppress(DeepacpError):  # nothing is left of a session not made
                await self.manager.delete(record.id)
            raise
        self._spawn(session.announce())  # after the response: Zed drops updates before it
        return S.NewSessionResponse(session_id=record.id, **self._state(session))

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: McpServers | None = None,
        additional_directories: list[str] | None = None,
        **_: Any,
    ) -> S.LoadSessionResponse:
        record = self.manager.record(session_id, cwd)
        await self.manager.reach()
        keep = self._transcripts is not None and self.manager.get(record.id) is None
        keep = keep and not mcp_servers and not additional_directories
        session = self._open(record, mcp_servers, additional_directories)
        if session.running:
            raise SessionBusy("the session is running a turn")
        key = self._transcripts.key(record) if keep and self._transcripts else None
        sent = await self._redraw(session)
        response = S.LoadSessionResponse(**self._state(session))
        self._keep(session, key, sent, _dump(response))
        return response

    def _keep(self, session: Session, key: str | None, sent: list[dict], result: dict) -> None:
        """Keep what a load sent, made from the inputs `key` names, if nothing changed
        them meanwhile (a turn that began at once, a mode switched)."""
        if self._transcripts is not None and key and key == self._transcripts.key(session.record):
            self._transcripts.save(session.id, key, sent, result)

    async def _redraw(self, session: Session) -> list[dict]:
        """Send the conversation so far, then the session-start events, as a load does;
        the updates sent."""
        handler = cast(AcpSessionHandler, session.handler)
        handler.recording = []
        try:
            for event in await session.history():
                await handler.emit(event)
            await session.announce()  # before the response: nothing may follow a load's
            return handler.recording
        finally:
            handler.recording = None

    async def adopt(self, quick: QuickLoad) -> None:
        """Take over a `session/load` answered from its transcript before the SDK was
        loaded: open the session, run the load without sending it, and send what differs
        (the slash commands, the modes and options); keep the new transcript."""
        try:
            session = self._open(quick.record)
            key = self._transcripts.key(quick.record) if self._transcripts else None
            handler = cast(AcpSessionHandler, session.handler)
            handler.muted = True
            try:
                sent = await self._redraw(session)
            finally:
                handler.muted = False
            result = _dump(S.LoadSessionResponse(**self._state(session)))
        except Exception:  # the client has its answer; the next request opens it again
            log.exception("could not take over the load of session %s", quick.record.id)
            return
        if sent == quick.updates and result == quick.result:
            return
        log.info("session %s was loaded from a stale transcript: corrected", quick.record.id)
        if result != quick.result:
            await handler.emit(ModeChanged(session.record.mode))  # the mode and the options
        if _commands(sent) != _commands(quick.updates):
            await handler.emit(CommandsChanged(await session.commands()))
        if _commands(sent, False) != _commands(quick.updates, False):
            log.warning("session %s was redrawn from a stale transcript", quick.record.id)
        self._keep(session, key, sent, result)

    async def _kept_at_close(self, sessions: list[Session]) -> None:
        """Keep what a load of each closed session would send, for the next process, when
        its saved replay is current (so it is read without the harness)."""
        transcripts = self._transcripts
        if transcripts is None:
            return
        for session in sessions:
            record = session.record
            replay = transcripts.replays.key(record.thread_id, (record.cwd,))
            if (
                session.ctx.roots[1:]
                or session.part(SandboxPart).policy != _start_policy(self.options.sandbox)
                or not transcripts.replays.is_saved(record.id, replay)
                or transcripts.is_current(record)
            ):
                continue
            key = transcripts.key(record)
            sink = AcpSessionHandler(self.conn, record.id, self.client_capabilities, lambda: [])
            sink.recording, sink.muted = [], True
            try:
                for event in [*await session.history(), *await session.opening()]:
                    await sink.emit(event)
                result = _dump(S.LoadSessionResponse(**self._state(session)))
            except Exception:  # the next load reads it the usual way
                log.debug("no load transcript kept for session %s", record.id, exc_info=True)
                continue
            self._keep(session, key, sink.recording, result)

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: McpServers | None = None,
        **_: Any,
    ) -> S.ResumeSessionResponse:
        record = self.manager.record(session_id, cwd)
        await self.manager.reach()
        session = self._open(record, mcp_servers, additional_directories)
        self._spawn(session.announce())
        return S.ResumeSessionResponse(**self._state(session))

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: McpServers | None = None,
        **_: Any,
    ) -> S.ForkSessionResponse:
        """A new session with the conversation and restore points of `session_id` so far
        (the same workspace: its restore points name files there)."""
        source = self._session(self.manager.record(session_id, cwd).id)
        if source.running:
            raise SessionBusy("the session is running a turn; fork it when the turn ends")
        forked = await source.part(RestorePart).fork()
        session = self._open(forked, mcp_servers, additional_directories)
        self._spawn(session.announce())
        return S.ForkSessionResponse(session_id=forked.id, **self._state(session))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **_: Any
    ) -> S.ListSessionsResponse:
        return S.ListSessionsResponse(
            sessions=[
                S.SessionInfo(session_id=r.id, cwd=r.cwd, title=r.title, updated_at=r.updated_at)
                for r in self.manager.records(cwd)
            ]
        )

    async def close_session(self, session_id: str, **_: Any) -> S.CloseSessionResponse:
        session = self.manager.get(session_id)
        if not await self.manager.close(session_id):
            self.manager.record(session_id)  # an unknown id is an error; a closed one is not
        if session is not None:
            await self._kept_at_close([session])
        return S.CloseSessionResponse()

    async def delete_session(self, params: Any) -> dict:
        """Delete a session; one that does not exist (say, already deleted) is no error."""
        await self.manager.delete(S.DeleteSessionRequest.model_validate(params).session_id)
        return {}

    async def set_session_mode(
        self, session_id: str, mode_id: str, **_: Any
    ) -> S.SetSessionModeResponse:
        await self._set_mode(self._session(session_id), mode_id)
        return S.SetSessionModeResponse()

    async def _set_mode(self, session: Session, mode_id: str) -> None:
        try:
            mode = parse_mode(mode_id)
        except ValueError as exc:
            raise _bad_params(str(exc)) from None
        await session.set_mode(mode)

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: Any
    ) -> S.SetSessionConfigOptionResponse:
        session = self._session(session_id)
        if config_id == "mode":
            await self._set_mode(session, str(value))
        elif config_id == "model":
            await session.set_model(self._resolve_spec(str(value)))
        elif config_id == updates.EFFORT_OPTION and (choice := self._effort(session.record)):
            if value not in choice.levels:
                raise _bad_params(
                    f"effort {value!r} is not offered by {session.record.model}; "
                    f"choose one of {', '.join(choice.levels)}"
                )
            await session.set_effort(parse_effort(value))
        elif config_id == updates.SANDBOX_OPTION:
            await session.part(SandboxPart).set(_sandbox_choice(value))
        else:
            raise _bad_params(f"unknown config option {config_id!r}")
        return S.SetSessionConfigOptionResponse(
            config_options=self._state(session)["config_options"]
        )

    async def prompt(self, session_id: str, prompt: PromptBlocks, **_: Any) -> S.PromptResponse:
        session = self._session(session_id)
        stop = await session.prompt(updates.prompt_content(prompt, session.record.cwd))
        return S.PromptResponse(
            stop_reason=stop,
            field_meta=updates.turn_meta(session.last_turn_usage, session.last_message_id),
        )

    async def cancel(self, session_id: str, **_: Any) -> None:
        if (session := self.manager.get(session_id)) is not None:
            await session.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == REWIND_METHOD:
            return await self._rewind(rewind.parse(rewind.RewindRequest, params))
        if method == EDIT_PROMPT_METHOD:
            return await self._edit_prompt(rewind.parse(rewind.EditPromptRequest, params))
        if method == steering.METHOD:
            return await self._steer(params)
        raise RequestError.method_not_found(f"_{method}")

    async def _rewound(
        self, session_id: str, message_id: str, keep_turn: bool, on_conflict: str
    ) -> tuple[Session, dict[str, Any]]:
        """Go back to before prompt `message_id` (after its turn, when `keep_turn`),
        cancelling a running turn first; the session and the result's `_meta`."""
        session = self._session(session_id)
        number = session.part(RestorePart).number(message_id)
        if number is None:
            raise rewind.unknown_message(message_id, session_id)
        await session.stop()
        if keep_turn and number == len(session.part(RestorePart).prompts()):
            return session, {}  # nothing after it to take back
        force, keep = on_conflict == "restore", on_conflict == "keep"
        restore = session.part(RestorePart)
        done = await restore.rewind(number + 1 if keep_turn else number, force=force, keep=keep)
        if done.conflicts and not (force or keep):
            raise rewind.conflicts_error(done.conflicts)
        return session, rewind.files_meta(done)

    async def _rewind(self, request: rewind.RewindRequest) -> dict[str, Any]:
        _, meta = await self._rewound(
            request.session_id, request.to_message_id, True, request.on_conflict
        )
        return {"lastMessageId": request.to_message_id, "_meta": meta}

    async def _edit_prompt(self, request: rewind.EditPromptRequest) -> dict[str, Any]:
        session, meta = await self._rewound(
            request.session_id, request.message_id, False, request.on_conflict
        )
        stop = await session.prompt(updates.prompt_content(request.content, session.record.cwd))
        turn = updates.turn_meta(session.last_turn_usage, session.last_message_id) or {}
        return {
            "stopReason": stop,
            "messageId": session.last_message_id,
            "_meta": {"deepacp": {**meta.get("deepacp", {}), **turn.get("deepacp", {})}},
        }

    async def _steer(self, params: Any) -> dict[str, Any]:
        """Into the running turn; with none, a new turn (or back to the client)."""
        try:
            request = steering.parse_steering(params)
        except steering.SteeringParamsError as exc:
            raise _bad_params(str(exc)) from None
        session = self._session(request.session_id)
        content = updates.prompt_content(request.prompt, session.record.cwd)
        if await session.steer(content):
            return steering.steering_response("injected")
        if request.prompt_required:
            return steering.steering_response("promptRequired")
        if (turn := session.start(content)) is None:  # one started meanwhile: join it
            await session.steer(content)
            return steering.steering_response("injected")
        self._spawn(self._told_if_it_fails(session, turn))
        return steering.steering_response("startedNewTurn")

    async def _told_if_it_fails(self, session: Session, turn: asyncio.Task) -> None:
        """A turn no `session/prompt` waits for: its failure is told in the chat."""
        try:
            await turn
        except DeepacpError as exc:
            await session.handler.emit(Notice(str(exc)))

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.debug("ignored the extension notification _%s", method)

    async def shutdown(self) -> None:
        for task in self._background:
            task.cancel()
        sessions = list(self.manager.sessions.values())
        await self.manager.shutdown()
        await self._kept_at_close(sessions)


def make_handler(agent: DeepacpAgent) -> Any:
    """The SDK's router for the standard methods, plus the ones it does not route; our
    errors become one-line JSON-RPC errors."""
    router = build_agent_router(agent, use_unstable_protocol=True)
    extra = {"session/delete": agent.delete_session, "logout": agent.logout}

    async def handle(method: str, params: Any, is_notification: bool) -> Any:
        try:
            if method in extra and not is_notification:
                return await extra[method](params)
            if method == "$/cancel_request":
                return None  # a client may cancel a request it sent; ours finish promptly
            return await router(method, params, is_notification)
        except DeepacpError as exc:
            raise request_error(exc) from None

    return handle


async def run_connection(
    transport: StdioTransport,
    client_params: dict,
    options: ServerOptions,
    harness_loaded: Future | None = None,
    store: Store | None = None,
    quick: QuickLoad | None = None,
    lifetime: Lifetime | None = None,
) -> None:
    """Serve ACP on an already-initialized transport until the client goes away (`quick`:
    the session/load answered already from `store`, see `quickload.py`); then shut down,
    as `lifetime` allows (see `lifetime.py`)."""
    agent = DeepacpAgent(client_params, options, harness_loaded, store)
    conn = agent.conn = Connection(make_handler(agent), transport, listening=False)
    try:
        if quick is not None:  # before any other request is read
            await agent.adopt(quick)
        await conn.main_loop()
    finally:
        await (lifetime or Lifetime()).end(_shutdown(agent, conn))


async def _shutdown(agent: DeepacpAgent, conn: Connection) -> None:
    try:
        await agent.shutdown()
    finally:
        with contextlib.suppress(Exception):
            await conn.close()
