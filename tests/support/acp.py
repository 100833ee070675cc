"""The ACP test harness: drive the real `deepacp --stdio` binary over stdio with the ACP
SDK's client side, as an editor does.

Every message the server writes is recorded and, when the test ends, validated against
the SDK's schema types and the ACP 1.25 JSON schema (`acp_schema.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process
from acp import schema as S
from acp.connection import StreamDirection, StreamEvent

from tests.support import acp_schema
from tests.support.inprocess import serve_in_process

DEEPACP = str(Path(sys.executable).parent / "deepacp")

RESPONSE_TYPES = {
    "initialize": S.InitializeResponse,
    "session/new": S.NewSessionResponse,
    "session/load": S.LoadSessionResponse,
    "session/resume": S.ResumeSessionResponse,
    "session/list": S.ListSessionsResponse,
    "session/prompt": S.PromptResponse,
    "session/set_mode": S.SetSessionModeResponse,
    "session/set_config_option": S.SetSessionConfigOptionResponse,
    "session/close": S.CloseSessionResponse,
}
REQUEST_TYPES = {
    "session/update": S.SessionNotification,
    "session/request_permission": S.RequestPermissionRequest,
    "fs/read_text_file": S.ReadTextFileRequest,
    "fs/write_text_file": S.WriteTextFileRequest,
    "terminal/create": S.CreateTerminalRequest,
    "terminal/output": S.TerminalOutputRequest,
    "terminal/wait_for_exit": S.WaitForTerminalExitRequest,
    "terminal/kill": S.KillTerminalRequest,
    "terminal/release": S.ReleaseTerminalRequest,
    "elicitation/create": S.CreateFormSessionElicitationRequest,
}
NEWER_UPDATES = frozenset({"notice", "compaction_update", "compaction_summary_chunk"})
"""Session updates of the 1.25 schema the SDK's models lack: only the 1.25 check sees
them (with `subagent_update`, which only the unstable schema has)."""


@dataclass
class RecordingClient:
    """An ACP client that records updates and answers permission requests from a queue: an
    option id, None (cancelled), or an exception (answered as a JSON-RPC error)."""

    updates: list[tuple[str, Any]] = field(default_factory=list)
    permission_requests: list[S.RequestPermissionRequest] = field(default_factory=list)
    answers: list[str | Exception | None] = field(default_factory=list)
    on_permission: Callable[[S.RequestPermissionRequest], Awaitable[None]] | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> S.RequestPermissionResponse:
        request = S.RequestPermissionRequest(
            session_id=session_id, tool_call=tool_call, options=options
        )
        self.permission_requests.append(request)
        if self.on_permission is not None:
            await self.on_permission(request)
        answer = self.answers.pop(0) if self.answers else "allow_once"
        if isinstance(answer, Exception):
            raise answer
        if answer is None:
            return S.RequestPermissionResponse(outcome=S.DeniedOutcome(outcome="cancelled"))
        return S.RequestPermissionResponse(
            outcome=S.AllowedOutcome(outcome="selected", option_id=answer)
        )

    def of(self, kind: type, session_id: str | None = None) -> list[Any]:
        return [u for s, u in self.updates if isinstance(u, kind) and session_id in (None, s)]

    def text(self, session_id: str | None = None) -> str:
        return "".join(u.content.text for u in self.of(S.AgentMessageChunk, session_id))

    def cards(self, session_id: str | None = None) -> dict[str, dict[str, Any]]:
        """Each tool call's final state, folded from its `tool_call` and updates."""
        cards: dict[str, dict[str, Any]] = {}
        for s, update in self.updates:
            if session_id not in (None, s):
                continue
            if isinstance(update, S.ToolCallStart | S.ToolCallProgress):
                card = cards.setdefault(update.tool_call_id, {"statuses": [], "starts": 0})
                if isinstance(update, S.ToolCallStart):
                    card["starts"] += 1
                for key in ("title", "kind", "raw_input", "locations", "content"):
                    if getattr(update, key) is not None:
                        card[key] = getattr(update, key)
                if update.status is not None:
                    card["statuses"].append(update.status)
        return cards


@dataclass
class EditorRecordingClient(RecordingClient):
    """A client that is also an editor: open buffers, recorded writes, real terminals."""

    buffers: dict[str, str] = field(default_factory=dict)
    writes: list[tuple[str, str]] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    terminals: dict[str, Any] = field(default_factory=dict)
    killed: list[str] = field(default_factory=list)
    released: list[str] = field(default_factory=list)
    elicitation_answers: list[Any] = field(default_factory=list)
    elicitations: list[Any] = field(default_factory=list)

    async def read_text_file(
        self, session_id: str, path: str, **kwargs: Any
    ) -> S.ReadTextFileResponse:
        self.reads.append(path)
        if path in self.buffers:
            return S.ReadTextFileResponse(content=self.buffers[path])
        return S.ReadTextFileResponse(content=Path(path).read_text())

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any):
        self.writes.append((path, content))
        self.buffers[path] = content  # the editor holds the change for review
        return S.WriteTextFileResponse()

    async def create_terminal(
        self, session_id: str, command: str, args=None, cwd=None, **kwargs: Any
    ):
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        terminal_id = f"term-{len(self.terminals) + 1}"
        output: list[bytes] = []

        async def pump() -> None:
            while chunk := await process.stdout.read(4096):
                output.append(chunk)

        self.terminals[terminal_id] = (process, output, asyncio.create_task(pump()))
        return S.CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any):
        process, output, _ = self.terminals[terminal_id]
        status = None
        if process.returncode is not None:
            status = S.TerminalExitStatus(exit_code=process.returncode)
        return S.TerminalOutputResponse(
            output=b"".join(output).decode(), truncated=False, exit_status=status
        )

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any):
        process, _, pump = self.terminals[terminal_id]
        await process.wait()
        await pump
        return S.WaitForTerminalExitResponse(exit_code=process.returncode)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any):
        self.killed.append(terminal_id)
        process, _, _ = self.terminals[terminal_id]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        return S.KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any):
        self.released.append(terminal_id)
        return S.ReleaseTerminalResponse()

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any):
        self.elicitations.append((message, mode))
        answer = self.elicitation_answers.pop(0) if self.elicitation_answers else None
        if answer is None:
            return S.CancelElicitationResponse(action="cancel")
        return S.AcceptElicitationResponse(action="accept", content={"answer": answer})


class Wire:
    """Raw messages the server wrote, checked against the schemas at the end (`unstable`:
    every message against the unstable 1.25 schema, for a client that declared an
    unstable capability)."""

    def __init__(self) -> None:
        self.incoming: list[dict] = []
        self.outgoing_methods: dict[Any, str] = {}
        self.unstable = False

    def observe(self, event: StreamEvent) -> None:
        if event.direction == StreamDirection.OUTGOING:
            if "method" in event.message and "id" in event.message:
                self.outgoing_methods[event.message["id"]] = event.message["method"]
        else:
            self.incoming.append(event.message)

    def validate(self) -> None:
        for message in self.incoming:
            if "method" in message:
                model = REQUEST_TYPES.get(message["method"])
                assert model is not None, f"unexpected method from the server: {message['method']}"
                if self.newer(message) is None:
                    model.model_validate(message["params"])
            elif "error" in message:
                error = message["error"]
                assert isinstance(error["code"], int) and error["message"]
                assert error.get("data", "absent") is not None, "null data: omit it instead"
            else:
                method = self.outgoing_methods.get(message["id"])
                model = RESPONSE_TYPES.get(method or "")
                if model is not None:
                    model.model_validate(message["result"])
        self.validate_1_25()

    def newer(self, message: dict) -> str | None:
        """The kind of a session update the SDK's models lack, or None."""
        update = message.get("params", {}).get("update") if message.get("method") else None
        kind = update.get("sessionUpdate") if isinstance(update, dict) else None
        return kind if kind in NEWER_UPDATES or kind == "subagent_update" else None

    def updates(self, *kinds: str) -> list[tuple[str, dict]]:
        """The session updates of `kinds` the server sent, raw: (session id, update)."""
        return [
            (m["params"]["sessionId"], m["params"]["update"])
            for m in self.incoming
            if m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] in kinds
        ]

    def validate_1_25(self) -> None:
        if isinstance(reason := acp_schema.schemas(), str):
            warnings.warn(f"not checked against ACP 1.25: {reason}", stacklevel=2)
            return
        for message in self.incoming:
            method = message.get("method") or self.outgoing_methods.get(message.get("id"))
            acp_schema.check(message, sender="agent", method=method, unstable=self.unstable)


@dataclass
class Agent:
    conn: Any
    process: asyncio.subprocess.Process | None
    """None: served in this process."""
    client: RecordingClient
    wire: Wire
    workspace: Path
    home: Path
    script: Path
    info: S.InitializeResponse

    async def new_session(self, cwd: Path | None = None) -> str:
        response = await self.conn.new_session(cwd=str(cwd or self.workspace), mcp_servers=[])
        return response.session_id

    async def prompt(self, session_id: str, text: str) -> S.PromptResponse:
        return await self.conn.prompt(
            session_id=session_id, prompt=[S.TextContentBlock(type="text", text=text)]
        )

    async def raw_request(self, method: str, params: dict) -> Any:
        # The SDK's client has no method for these; its connection sends any request.
        return await self.conn._conn.send_request(method, params)


def write_script(path: Path, turns: list[dict], **extra: Any) -> Path:
    path.write_text(json.dumps({"turns": turns, **extra}))
    return path


@contextlib.asynccontextmanager
async def _connect(
    client: RecordingClient,
    command: tuple[str, ...] | None,
    args: tuple[str, ...],
    env: dict[str, str],
    workspace: Path,
    wire: Wire,
    *,
    in_process: bool,
) -> AsyncIterator[tuple[Any, asyncio.subprocess.Process | None]]:
    """A client connection to the server, and its process (None: in this process)."""
    if in_process:
        assert command is None, "a command of its own needs a process of its own"
        async with serve_in_process(
            client, ("--stdio", *args), env, workspace, [wire.observe]
        ) as conn:
            yield conn, None
        return
    async with spawn_agent_process(
        client,
        *(command or (DEEPACP, "--stdio", *args)),
        env=env,
        cwd=workspace,
        transport_kwargs={"stderr": None},
        observers=[wire.observe],
        use_unstable_protocol=True,
    ) as (conn, process):
        yield conn, process


@contextlib.asynccontextmanager
async def start_agent(
    tmp_path: Path,
    turns: list[dict],
    *,
    home: Path | None = None,
    workspace: Path | None = None,
    client: RecordingClient | None = None,
    env: dict[str, str] | None = None,
    script_name: str = "script.json",
    args: tuple[str, ...] = (),
    capabilities: S.ClientCapabilities | dict | None = None,
    command: tuple[str, ...] | None = None,
    load: str | None = None,
    in_process: bool | None = None,
) -> AsyncIterator[Agent]:
    """Start the server (`command`, default `deepacp --stdio *args`) with a scripted model
    (`load`: a session to load as soon as `initialize` is answered, as an editor that
    restores its last session does; `in_process`: served in this process, see
    `inprocess.py`; by default it is unless a `command` is given; `capabilities` as a dict:
    sent as they are, for what the SDK's models do not have)."""
    if in_process is None:
        in_process = command is None
    workspace = workspace or tmp_path / "workspace"
    workspace.mkdir(exist_ok=True)
    home = home or tmp_path / "home"
    script = write_script(tmp_path / script_name, turns, record=str(tmp_path / "requests.jsonl"))
    client = client or RecordingClient()
    wire = Wire()
    full_env = {
        "DEEPACP_HOME": str(home),
        "DEEPACP_MODEL": f"scripted:{script}",
        "PATH": os.environ.get("PATH", ""),
        **(env or {}),
    }
    async with _connect(
        client, command, args, full_env, workspace, wire, in_process=in_process
    ) as (conn, process):
        if isinstance(capabilities, dict):
            wire.unstable = "subagents" in capabilities
            raw = {"protocolVersion": PROTOCOL_VERSION, "clientCapabilities": capabilities}
            info = S.InitializeResponse.model_validate(
                await conn._conn.send_request("initialize", raw)
            )
        else:
            initialize = conn.initialize(
                protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities
            )
            info = await initialize
        if load is not None:  # once `initialize` is answered, as the protocol has it
            await conn.load_session(cwd=str(workspace), session_id=load, mcp_servers=[])
        agent = Agent(conn, process, client, wire, workspace, home, script, info)
        yield agent
        wire.validate()


@pytest.fixture
def agent_factory(tmp_path: Path, in_process: bool):
    """`async with agent_factory(turns, ...) as agent:` starts a server with a script."""

    def factory(turns: list[dict], **kwargs: Any):
        kwargs.setdefault("in_process", in_process)
        return start_agent(tmp_path, turns, **kwargs)

    return factory


@pytest.fixture
def model_requests(tmp_path: Path) -> Callable[[], list[dict]]:
    """What the scripted model received so far, one entry per model call."""

    def read() -> list[dict]:
        path = tmp_path / "requests.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    return read


@pytest.fixture
def editor_client() -> EditorRecordingClient:
    return EditorRecordingClient()


def editor_capabilities(
    read: bool = True, write: bool = True, terminal: bool = True, elicitation: bool = False
):
    return S.ClientCapabilities(
        fs=S.FileSystemCapabilities(read_text_file=read, write_text_file=write),
        terminal=terminal,
        elicitation=S.ElicitationCapabilities(form=S.ElicitationFormCapabilities())
        if elicitation
        else None,
    )


@pytest.fixture
def capabilities():
    """`capabilities(read=..., write=..., terminal=..., elicitation=...)` for initialize."""
    return editor_capabilities
