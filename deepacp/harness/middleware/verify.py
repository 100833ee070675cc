"""VerifyMiddleware: before a turn that changed files ends, the model is asked to check it.

When the model answers without tool calls, the turn changed files (a file tool call that
succeeded since the user's last message), the project says how its work is checked
(`deepacp.harness.checks`) and the model can run commands, it is asked once in the turn to
run those checks and say the result, and called again. The check runs as any command does
(approved like one). Files count when they are the workspace's own, other than AGENTS.md.
A turn that changed nothing, that stopped for a limit, a refusal or a
loop, or that was asked already, ends as it would. Only the model's step is wrapped: no
graph node is added. `verify = false` in config.toml turns it off.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain.agents.middleware import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
)
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage

from deepacp.backends.errors import BackendError
from deepacp.backends.protocol import Backend
from deepacp.harness.checks import project_checks
from deepacp.harness.middleware.inbox import NOTE_KIND, is_note
from deepacp.harness.middleware.responses import Response, messages_of, with_messages
from deepacp.harness.middleware.tool_loops import LOOP_MARK
from deepacp.harness.middleware.truncation import LIMIT_STOPS, stop_of
from deepacp.harness.names import EXECUTE, MEMORY_FILE, MUTATING_FILE_TOOLS

VERIFY_NOTE = "verify"
NO_CHECK_STOPS = LIMIT_STOPS | {"refusal", "content_filter"}


def verify_note(paths: Sequence[str], checks: Sequence[str]) -> HumanMessage:
    """What the model is asked before it ends a turn that changed files."""
    commands = ", ".join(f"`{c}`" for c in checks)
    return HumanMessage(
        f"Before you finish: this turn changed {', '.join(paths)}. Check the work the way "
        f"this project does ({commands}; or what AGENTS.md says), then say in a line or two "
        "what the result was. If the check cannot run here, say so instead.",
        additional_kwargs={NOTE_KIND: VERIFY_NOTE},
    )


def changed_this_turn(messages: Sequence[AnyMessage]) -> tuple[list[str], bool]:
    """The paths file tools changed since the user's last message, and whether the model was
    asked to check them already."""
    succeeded: set[str] = set()
    paths: list[str] = []
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            if message.additional_kwargs.get(NOTE_KIND) == VERIFY_NOTE:
                return [], True
            if not is_note(message):
                break
        elif isinstance(message, ToolMessage) and message.status != "error":
            succeeded.add(message.tool_call_id)
        elif isinstance(message, AIMessage):
            for call in message.tool_calls:
                path = (call.get("args") or {}).get("file_path")
                changed = call["name"] in MUTATING_FILE_TOOLS and call["id"] in succeeded
                if changed and isinstance(path, str) and path not in paths:
                    paths.insert(0, path)
    return paths, False


def _final_reply(response: Response) -> AIMessage | None:
    inner = messages_of(response)
    reply = inner.result[-1] if inner.result else None
    if not isinstance(reply, AIMessage) or reply.tool_calls:
        return None
    if stop_of(reply) in NO_CHECK_STOPS or reply.additional_kwargs.get(LOOP_MARK):
        return None
    return reply


class VerifyMiddleware(AgentMiddleware):
    """Asks the model to check a turn's changes before it ends (see the module)."""

    def __init__(self, backend: Backend) -> None:
        super().__init__()
        self.backend = backend

    def _project_files(self, paths: Sequence[str]) -> list[str]:
        """The workspace's own files among `paths`: not memory notes, not routed paths
        (`/user/AGENTS.md`, scratch files)."""
        kept = []
        for path in paths:
            try:
                shown = self.backend.workspace_path(path)
            except BackendError:
                continue
            if not shown.startswith("/") and shown.rsplit("/", 1)[-1] != MEMORY_FILE:
                kept.append(shown)
        return kept

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> Response:
        return handler(request)  # the checks are found through the async backend only

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Response:
        response = await handler(request)
        reply = _final_reply(response)
        if reply is None or not any(_tool_name(t) == EXECUTE for t in request.tools):
            return response
        changed, asked = changed_this_turn(request.messages)
        paths = self._project_files(changed)
        if asked or not paths:
            return response
        checks = await project_checks(self.backend)
        if not checks:
            return response
        inner = messages_of(response)
        said: list[Any] = [*inner.result, verify_note(paths, checks)]
        again = request.override(messages=[*request.messages, *said])
        return with_messages(await handler(again), before=said)


def _tool_name(tool: Any) -> str | None:
    if isinstance(tool, dict):
        return tool.get("name") or (tool.get("function") or {}).get("name")
    return getattr(tool, "name", None)
