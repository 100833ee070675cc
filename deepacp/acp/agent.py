"""The ACP agent: thin handlers from ACP requests to the session manager (served, with
errors as JSON-RPC errors, by `connection.py`). Sessions' events reach the client through
`client.AcpSessionHandler`; their modes and options are `options.py`'s, the extension
methods `extensions.py`'s and what a load keeps for the next process `quickload.py`'s.
Over 350 lines only because each ACP request keeps its handler here, one short method each."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from acp import schema as S
from acp.connection import Connection
from acp.interfaces import Client

from deepacp.acp import options as opts
from deepacp.acp import updates
from deepacp.acp.capabilities import AUTH_METHOD, SETUP_METHOD, initialize_result
from deepacp.acp.client import AcpEditorClient, AcpSessionHandler
from deepacp.acp.extensions import ext_method
from deepacp.acp.newer_schema import declared_capabilities
from deepacp.acp.quickload import Loads, transcripts_of
from deepacp.acp.rpc import bad_params
from deepacp.acp.turn_result import prompt_response
from deepacp.backends.editor_review import EditorReview
from deepacp.config import ServerOptions, deepacp_home
from deepacp.errors import DeepacpError, SessionBusy
from deepacp.models import resolve_model
from deepacp.session import (
    DEFAULT_MODE,
    McpServer,
    Ready,
    RestorePart,
    SandboxPart,
    ServerThreads,
    Session,
    SessionManager,
    SessionRecord,
    Store,
    Workspace,
    no_wait,
    open_store,
    through_editor,
)

log = logging.getLogger(__name__)

McpServers = list[S.HttpMcpServer | S.SseMcpServer | S.AcpMcpServer | S.McpServerStdio]
PromptBlocks = list[
    S.TextContentBlock
    | S.ImageContentBlock
    | S.AudioContentBlock
    | S.ResourceContentBlock
    | S.EmbeddedResourceContentBlock
]


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


def _roots(cwd: str, directories: list[str] | None) -> tuple[str, ...]:
    roots = []
    for directory in directories or []:
        path = Path(directory)
        if not path.is_absolute() or not path.is_dir():
            raise bad_params(f"additional directory {directory!r} is not an absolute directory")
        if path.resolve() != Path(cwd).resolve():
            roots.append(str(path))
    return tuple(roots)


def _harness_ready(harness_loaded: Future | None) -> Ready:
    """Waits for the harness imported in a background thread at start-up (starting the
    import if it has not begun: see `deepacp.acp.loading.HarnessImport`)."""
    if harness_loaded is None:
        return no_wait
    loaded = asyncio.wrap_future(harness_loaded)

    async def ready() -> None:
        start = getattr(harness_loaded, "start", None)
        if start is not None:
            start()
        await asyncio.shield(loaded)  # a cancelled waiter must not cancel the import

    return ready


class DeepacpAgent:
    """Implements the ACP agent methods deepacp advertises (`acp.interfaces.Agent`);
    the ones it does not offer answer "method not found"."""

    conn: Connection  # set once the connection exists (`connection.run_connection`)

    def __init__(
        self,
        client_params: dict,
        options: ServerOptions,
        harness_loaded: Future | None = None,
        store: Store | None = None,
    ) -> None:
        self.client_capabilities = declared_capabilities(client_params.get("clientCapabilities"))
        self.options = options
        store = store or open_store(deepacp_home())
        self.manager = _manager(store, options, harness_loaded)
        self._background: set[asyncio.Task] = set()
        self.loads = _loads(self, store, client_params)

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
        capabilities = self.client_capabilities.model_dump(by_alias=True)
        params = {"protocolVersion": protocol_version, "clientCapabilities": capabilities}
        return S.InitializeResponse.model_validate(initialize_result(params))

    async def authenticate(self, method_id: str, **_: Any) -> S.AuthenticateResponse:
        """Checks that the configured model is usable (package, key) without calling it."""
        if method_id == SETUP_METHOD:
            raise bad_params(
                f"{SETUP_METHOD!r} runs in a terminal: start deepacp with `setup` there, "
                "then reconnect"
            )
        if method_id != AUTH_METHOD:
            raise bad_params(f"unknown auth method {method_id!r}; use {AUTH_METHOD!r}")
        opts.resolve_spec(self.options, None)
        return S.AuthenticateResponse()

    async def logout(self, params: Any) -> dict:
        """Forget the API keys `deepacp setup` stored (keys in the environment are the
        editor's settings, not ours to forget)."""
        from deepacp.credentials import forget_keys

        forget_keys()
        return {}

    def _state(self, session: Session) -> dict[str, Any]:
        return opts.session_state(session, self.options)

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
            raise bad_params(f"cwd must be an absolute path to a directory, got {cwd!r}")
        _roots(cwd, additional_directories)  # bad ones refused before anything is stored
        await self.manager.reach()  # an unreachable one is refused before anything is stored
        spec = opts.resolve_spec(self.options, None)
        record = self.manager.new_record(str(path), DEFAULT_MODE, spec)
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
        plain = self.manager.get(record.id) is None
        plain = plain and not mcp_servers and not additional_directories
        session = self._open(record, mcp_servers, additional_directories)
        if session.running:
            raise SessionBusy("the session is running a turn")
        return await self.loads.load(session, keep=plain)  # type: ignore[return-value]

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
            await self.loads.kept_at_close([session])
        return S.CloseSessionResponse()

    async def delete_session(self, params: Any) -> dict:
        """Delete a session; one that does not exist (say, already deleted) is no error."""
        await self.manager.delete(S.DeleteSessionRequest.model_validate(params).session_id)
        return {}

    async def set_session_mode(
        self, session_id: str, mode_id: str, **_: Any
    ) -> S.SetSessionModeResponse:
        await opts.set_mode(self._session(session_id), mode_id)
        return S.SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: Any
    ) -> S.SetSessionConfigOptionResponse:
        session = self._session(session_id)
        options = await opts.set_option(session, self.options, config_id, value)
        return S.SetSessionConfigOptionResponse(config_options=options)

    async def prompt(self, session_id: str, prompt: PromptBlocks, **_: Any) -> S.PromptResponse:
        session = self._session(session_id)
        stop = await session.prompt(updates.prompt_content(prompt, session.record.cwd))
        usage, message_id = session.last_turn_usage, session.last_message_id
        return prompt_response(stop, usage, message_id, self.client_capabilities)

    async def cancel(self, session_id: str, **_: Any) -> None:
        if (session := self.manager.get(session_id)) is not None:
            await session.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return await ext_method(method, params, self._session, self._spawn)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.debug("ignored the extension notification _%s", method)

    async def shutdown(self) -> None:
        for task in self._background:
            task.cancel()
        sessions = list(self.manager.sessions.values())
        await self.manager.shutdown()
        await self.loads.kept_at_close(sessions)


def _manager(store: Store, options: ServerOptions, harness_loaded: Future | None) -> SessionManager:
    """The owner of the agent's sessions, as the command line set them up."""
    return SessionManager(
        store,
        resolve_model,
        planning=options.planning,
        harness_ready=_harness_ready(harness_loaded),
        sandbox=opts.start_policy(options.sandbox),
        server=ServerThreads(options.server) if options.server else None,
        remote=options.remote,
        profile=options.profile,
    )


def _loads(agent: DeepacpAgent, store: Store, client_params: dict) -> Loads:
    """What the agent's loads keep for the next process (see `quickload.py`)."""
    start = agent.manager.sandbox

    def plain(session: Session) -> bool:  # no more roots, the sandbox it starts with
        return not session.ctx.roots[1:] and session.part(SandboxPart).policy == start

    return Loads(
        transcripts_of(agent.options, client_params, store),
        lambda session: S.LoadSessionResponse(**agent._state(session)),
        lambda session_id: AcpSessionHandler(
            agent.conn, session_id, agent.client_capabilities, lambda: []
        ),
        plain,
    )
