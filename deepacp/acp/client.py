"""The client side as a session sees it: where its events go, who answers its questions,
and the editor's files and terminals (`EditorClient`)."""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from acp import schema as S
from acp.connection import Connection
from acp.exceptions import RequestError
from acp.helpers import update_current_mode
from acp.meta import CLIENT_METHODS
from acp.utils import request_model, serialize_params
from pydantic import TypeAdapter

from deepacp import events
from deepacp.acp import updates
from deepacp.acp.newer import NewerUpdates, Outgoing
from deepacp.acp.newer_schema import declared_of
from deepacp.backends.editor_client import EditorError, TerminalStatus

log = logging.getLogger(__name__)

OUTPUT_UPDATE_INTERVAL = 0.05
OUTPUT_CARD_CHARS = 20_000
ANSWER_FIELD = "answer"
DECLINED = "The user declined to answer."
_ELICITATION = TypeAdapter(S.CreateElicitationResponse)


class AcpSessionHandler:
    """Sends one session's events to the client and asks it for permissions and answers."""

    def __init__(
        self,
        conn: Connection,
        session_id: str,
        capabilities: S.ClientCapabilities,
        config_options: Callable[[], list[Any]],
    ) -> None:
        self.conn = conn
        self.session_id = session_id
        self.capabilities = capabilities
        self.config_options = config_options
        self._output: dict[str, str] = {}
        self._last_output_update: dict[str, float] = {}
        self._terminals: dict[str, str] = {}
        self._mid_line = False
        """The agent's text so far ends inside a line (a notice then starts a new one)."""
        self.recording: list[dict] | None = None
        """When a list, each update is added to it as it is sent (a load kept for later)."""
        self.muted = False
        """Send nothing (a load run only to be recorded)."""
        self.newer = NewerUpdates(session_id, declared_of(capabilities))

    async def update(self, update: Any, session_id: str | None = None) -> None:
        """Send one `session/update`. The notification around the update (an ACP model
        already) is written out as `S.SessionNotification` would be: building that model
        means building every kind of update's validator, a third of the ACP schema, which
        a fresh process pays for on its first update (a session/load) for no check.
        `session_id`: a sub-agent's session (see `newer.py`), not this one."""
        params = serialize_params(update)
        if self.recording is not None:
            self.recording.append(params)
        if not self.muted:
            await self.conn.send_notification(
                CLIENT_METHODS["session_update"],
                {"sessionId": session_id or self.session_id, "update": params},
            )

    async def _send(self, outgoing: list[Outgoing]) -> None:
        for session_id, update in outgoing:
            await self.update(update, session_id)

    async def emit(self, event: events.Event) -> None:
        if (own := self.newer.own(event)) is not None:
            await self._send(own)
            return
        await self._emit(event)
        await self._send(self.newer.follow(event))

    async def _emit(self, event: events.Event) -> None:
        if isinstance(event, events.MessageChunk):
            self._mid_line = not event.text.endswith("\n")
        elif isinstance(event, events.Notice) and self._mid_line:
            self._mid_line = False
            event = dataclasses.replace(event, text=f"\n{event.text}")
        if isinstance(event, events.ToolOutput):
            await self._output_update(event)
        elif isinstance(event, events.ToolTerminal):
            self._terminals[event.tool_call_id] = event.terminal_id
            await self.update(updates.terminal_update(event.tool_call_id, event.terminal_id))
        elif isinstance(event, events.ToolFinished):
            self._output.pop(event.tool_call_id, None)
            self._last_output_update.pop(event.tool_call_id, None)
            terminal = self._terminals.pop(event.tool_call_id, None)
            await self.update(updates.to_update(event, terminal))
        elif isinstance(event, events.ModeChanged | events.ModelChanged | events.EffortChanged):
            if isinstance(event, events.ModeChanged):
                await self.update(update_current_mode(event.mode))
            await self.update(
                S.ConfigOptionUpdate(
                    session_update="config_option_update", config_options=self.config_options()
                )
            )
        elif isinstance(event, events.CommandsChanged):
            await self.update(updates.commands_update(event.commands))
        else:
            await self.update(updates.to_update(event))

    async def _output_update(self, event: events.ToolOutput) -> None:
        if event.tool_call_id in self._terminals:
            return  # the editor shows the terminal itself
        text = (self._output.get(event.tool_call_id, "") + event.text)[-OUTPUT_CARD_CHARS:]
        self._output[event.tool_call_id] = text
        moment = time.monotonic()
        if moment - self._last_output_update.get(event.tool_call_id, 0) < OUTPUT_UPDATE_INTERVAL:
            return  # coalesce: the next update (or the finished card) carries it
        self._last_output_update[event.tool_call_id] = moment
        await self.update(updates.tool_output_update(event.tool_call_id, text))

    async def _request_permission(
        self, request: S.RequestPermissionRequest
    ) -> S.RequestPermissionResponse | None:
        """The client's answer; None when it answered with an error (some clients do for
        a method they do not implement), which counts as a rejection."""
        try:
            return await request_model(
                self.conn,
                CLIENT_METHODS["session_request_permission"],
                request,
                S.RequestPermissionResponse,
            )
        except RequestError as exc:
            log.warning(
                "the client answered a permission request with error %s (%s): rejected",
                exc.code,
                exc,
            )
            return None

    async def ask_permission(
        self, request: events.PermissionRequest
    ) -> events.PermissionKind | None:
        response = await self._request_permission(
            S.RequestPermissionRequest(
                session_id=self.session_id,
                tool_call=updates.permission_tool_call(request),
                options=updates.permission_options(request),
            )
        )
        if response is None:
            return "reject_once"
        return updates.permission_answer(response, request)

    async def ask(self, question: events.Question) -> str | None:
        """Through elicitation when the client has it, else as a permission request whose
        options are the choices, else by ending the turn with the question."""
        elicitation = self.capabilities.elicitation
        if elicitation is not None and elicitation.form is not None:
            return await self._elicit(question)
        if question.choices:
            return await self._choose(question)
        return events.ASK_IN_CHAT

    async def _elicit(self, question: events.Question) -> str | None:
        request = S.CreateFormSessionElicitationRequest(
            session_id=self.session_id,
            tool_call_id=question.tool_call_id,
            mode="form",
            message=question.question,
            requested_schema=updates.answer_schema(question),
        )
        raw = await self.conn.send_request(
            CLIENT_METHODS["elicitation_create"], serialize_params(request)
        )
        response = _ELICITATION.validate_python(raw)
        if isinstance(response, S.AcceptElicitationResponse):
            return str((response.content or {}).get(ANSWER_FIELD, ""))
        if isinstance(response, S.DeclineElicitationResponse):
            return DECLINED
        return None

    async def _choose(self, question: events.Question) -> str | None:
        options = [
            S.PermissionOption(option_id=f"choice-{i}", name=choice, kind="allow_once")
            for i, choice in enumerate(question.choices)
        ]
        response = await self._request_permission(
            S.RequestPermissionRequest(
                session_id=self.session_id,
                tool_call=S.ToolCallUpdate(
                    tool_call_id=question.tool_call_id, title=question.question, kind="other"
                ),
                options=options,
            )
        )
        if response is None:
            return DECLINED
        outcome = response.outcome
        if isinstance(outcome, S.AllowedOutcome) and outcome.option_id.startswith("choice-"):
            index = int(outcome.option_id.removeprefix("choice-"))
            if 0 <= index < len(question.choices):
                return question.choices[index]
        return None


class AcpEditorClient:
    """The editor's files and terminals over ACP, offered as the client advertised them."""

    def __init__(
        self, conn: Connection, session_id: str, capabilities: S.ClientCapabilities
    ) -> None:
        self.conn = conn
        self.session_id = session_id
        fs = capabilities.fs
        self.can_read = bool(fs and fs.read_text_file)
        self.can_write = bool(fs and fs.write_text_file)
        self.can_run = bool(capabilities.terminal)

    @property
    def useful(self) -> bool:
        return self.can_read or self.can_write or self.can_run

    async def _request(self, method: str, params: Any, response_type: Any = None) -> Any:
        try:
            raw = await self.conn.send_request(CLIENT_METHODS[method], serialize_params(params))
        except RequestError as exc:
            detail = exc.data.get("details") if isinstance(exc.data, dict) else None
            raise EditorError(detail or str(exc)) from None
        return response_type.model_validate(raw) if response_type is not None else raw

    async def read_text_file(self, path: str) -> str:
        params = S.ReadTextFileRequest(session_id=self.session_id, path=path)
        return (await self._request("fs_read_text_file", params, S.ReadTextFileResponse)).content

    async def write_text_file(self, path: str, content: str) -> None:
        params = S.WriteTextFileRequest(session_id=self.session_id, path=path, content=content)
        await self._request("fs_write_text_file", params)

    async def create_terminal(self, argv: Sequence[str], cwd: str, output_limit: int) -> str:
        params = S.CreateTerminalRequest(
            session_id=self.session_id,
            command=argv[0],
            args=list(argv[1:]),
            cwd=cwd,
            output_byte_limit=output_limit,
        )
        return (
            await self._request("terminal_create", params, S.CreateTerminalResponse)
        ).terminal_id

    async def wait_for_exit(self, terminal_id: str) -> None:
        params = S.WaitForTerminalExitRequest(session_id=self.session_id, terminal_id=terminal_id)
        await self._request("terminal_wait_for_exit", params, S.WaitForTerminalExitResponse)

    async def terminal_status(self, terminal_id: str) -> TerminalStatus:
        params = S.TerminalOutputRequest(session_id=self.session_id, terminal_id=terminal_id)
        out = await self._request("terminal_output", params, S.TerminalOutputResponse)
        status = out.exit_status
        return TerminalStatus(
            output=out.output,
            truncated=out.truncated,
            exit_code=status.exit_code if status else None,
            signal=status.signal if status else None,
            exited=status is not None,
        )

    async def kill_terminal(self, terminal_id: str) -> None:
        params = S.KillTerminalRequest(session_id=self.session_id, terminal_id=terminal_id)
        await self._request("terminal_kill", params)

    async def release_terminal(self, terminal_id: str) -> None:
        params = S.ReleaseTerminalRequest(session_id=self.session_id, terminal_id=terminal_id)
        await self._request("terminal_release", params)
