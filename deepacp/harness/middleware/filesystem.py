"""FilesystemMiddleware: the file tools, large-result offload, and the same-path guard."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
)
from langchain_core.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from deepacp.backends.errors import BackendError
from deepacp.backends.permissions import tool_call_scope
from deepacp.backends.protocol import Backend
from deepacp.backends.state import FileRecord, FilesUpdate, merge_files, state_scope
from deepacp.harness.messages import text_of
from deepacp.harness.names import (
    HISTORY_DIR,
    LARGE_RESULTS_DIR,
    MUTATING_FILE_TOOLS,
    SELF_LIMITING_TOOLS,
)
from deepacp.harness.state import state_files
from deepacp.harness.tools import filesystem_tools

CHARS_PER_TOKEN = 4
OFFLOAD_TOKENS = 20_000
LARGE_INPUT_TOKENS = 50_000
PREVIEW_LINES = 5
PREVIEW_LINE_CHARS = 500


class FilesState(AgentState):
    files: NotRequired[Annotated[dict[str, FileRecord], merge_files]]


def offload_path() -> str:
    """A fresh name in the offload folder. Never the tool call's id: the model (or an
    endpoint passing the model's ids through) controls that, and `../` in it would climb."""
    return f"{LARGE_RESULTS_DIR}{uuid.uuid4().hex}"


def preview(text: str, path: str | None, what: str) -> str:
    """Head and tail of an offloaded text, with exact instructions to page through it (or,
    when `path` is None, a note that it could not be saved)."""
    lines = text.splitlines()

    def show(chunk: list[str], first: int) -> str:
        return "\n".join(
            f"{n:>6}\t{line[:PREVIEW_LINE_CHARS]}{' …' if len(line) > PREVIEW_LINE_CHARS else ''}"
            for n, line in enumerate(chunk, start=first)
        )

    head = show(lines[:PREVIEW_LINES], 1)
    where = f"it is saved in full at {path}." if path else "it could not be saved."
    parts = [
        f"{what} was too large to show ({len(text)} characters, {len(lines)} lines); {where}",
        head,
    ]
    if len(lines) > 2 * PREVIEW_LINES:
        parts.append(f"… [{len(lines) - 2 * PREVIEW_LINES} lines not shown] …")
        parts.append(show(lines[-PREVIEW_LINES:], len(lines) - PREVIEW_LINES + 1))
    elif len(lines) > PREVIEW_LINES:
        parts.append(show(lines[PREVIEW_LINES:], PREVIEW_LINES + 1))
    if path:
        parts.append(
            f'Read it with read_file(file_path="{path}", offset=0, limit=100) and increase '
            f'offset to page on, or search it with grep(pattern="…", path="{path}").'
        )
    return "\n".join(parts)


def with_files_update(result: ToolMessage | Command, updates: FilesUpdate) -> ToolMessage | Command:
    """Attach a tool run's file changes (StateBackend) to its result."""
    if not updates:
        return result
    if isinstance(result, ToolMessage):
        return Command(update={"files": updates, "messages": [result]})
    update = dict(result.update or {}) if isinstance(result.update, dict) else {}
    update["files"] = {**(update.get("files") or {}), **updates}
    return Command(graph=result.graph, goto=result.goto, resume=result.resume, update=update)


def _owning_message(messages: list[Any], call_id: str) -> AIMessage | None:
    for message in reversed(messages):
        if isinstance(message, AIMessage) and any(c["id"] == call_id for c in message.tool_calls):
            return message
    return None


class FilesystemMiddleware(AgentMiddleware):
    """Gives the agent its file tools (and execute, when the backend has a shell).

    - A tool result larger than ~20k tokens is written to `/large_tool_results/<our id>` and
      replaced by a head/tail preview with paging instructions (tools that bound their own
      output are exempt). A user message over ~50k tokens is likewise shown as a preview
      of `/conversation_history/<id>.md`; the state keeps it whole.
    - A second call changing the same file in one model turn is rejected.
    """

    state_schema = FilesState

    def __init__(
        self,
        backend: Backend,
        *,
        offload_tokens: int | None = OFFLOAD_TOKENS,
        large_input_tokens: int | None = LARGE_INPUT_TOKENS,
    ) -> None:
        super().__init__()
        self.backend = backend
        self.tools = filesystem_tools(backend)
        self.offload_chars = offload_tokens * CHARS_PER_TOKEN if offload_tokens else None
        self.large_input_chars = (
            large_input_tokens * CHARS_PER_TOKEN if large_input_tokens else None
        )

    def _same_path_conflict(self, request: ToolCallRequest) -> ToolMessage | None:
        call = request.tool_call
        if call["name"] not in MUTATING_FILE_TOOLS:
            return None
        owner = _owning_message(request.state.get("messages", []), str(call["id"]))
        if owner is None:
            return None
        target = self._target(call)
        for earlier in owner.tool_calls:
            if earlier["id"] == call["id"]:
                return None
            if (
                earlier["name"] in MUTATING_FILE_TOOLS
                and target
                and self._target(earlier) == target
            ):
                return ToolMessage(
                    content=(
                        f"Rejected: call {earlier['id']} in this same turn already changes "
                        f"{target}. Change a file at most once per turn; combine the edits, "
                        "or make this one after reading the result."
                    ),
                    tool_call_id=call["id"],
                    name=call["name"],
                    status="error",
                )
        return None

    def _target(self, call: ToolCall) -> str | None:
        try:
            return self.backend.workspace_path(str(call["args"].get("file_path", "")))
        except BackendError:
            return None

    async def _offload(self, message: ToolMessage) -> ToolMessage:
        text = text_of(message.content)
        if self.offload_chars is None or len(text) <= self.offload_chars:
            return message
        path = offload_path()
        saved: str | None = path
        try:  # through the backend stack, so permission rules apply as to any write
            await self.backend.write_text(path, text)
        except BackendError:
            saved = None
        shown = preview(text, saved, f"The result of {message.name}"[:200])
        return message.model_copy(update={"content": shown})

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command]],
    ) -> ToolMessage | Command:
        if conflict := self._same_path_conflict(request):
            return conflict
        with state_scope(state_files(request.state)) as scope:
            with tool_call_scope():
                result = await handler(request)
            if (
                isinstance(result, ToolMessage)
                and request.tool_call["name"] not in SELF_LIMITING_TOOLS
            ):
                result = await self._offload(result)
        return with_files_update(result, scope.updates)

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse | ExtendedModelResponse:
        if self.large_input_chars is None:
            return await handler(request)
        with state_scope(state_files(request.state)) as scope:
            messages = [await self._shrink_input(m) for m in request.messages]
        if all(a is b for a, b in zip(messages, request.messages, strict=True)):
            return await handler(request)
        response = await handler(request.override(messages=messages))
        if not scope.updates:
            return response
        return ExtendedModelResponse(response, Command(update={"files": scope.updates}))

    async def _shrink_input(self, message: Any) -> Any:
        if not isinstance(message, HumanMessage):
            return message
        text = text_of(message.content)
        if len(text) <= self.large_input_chars:  # type: ignore[operator]
            return message
        path = f"{HISTORY_DIR}{message.id or 'input'}.md"
        try:
            await self.backend.read_text(path)
        except BackendError:
            try:
                await self.backend.write_text(path, text)
            except BackendError:
                return message
        return message.model_copy(update={"content": preview(text, path, "This message")})
