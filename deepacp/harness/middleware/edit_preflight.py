"""EditPreflightMiddleware: an edit that cannot apply fails before the approval gate.

When `old_string` is not in the file (or is there more than once) the edit cannot happen
whatever the user answers: asking would show a card with no diff and then fail it anyway.
The call is answered here, just outside the gate (after any hook rewrote it), with the
error the tool itself gives, so the card fails with the reason and the model reads it.
Only an edit of a file that could be read is judged here; the tool reports the rest.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest

from deepacp.backends.errors import BackendError
from deepacp.backends.protocol import Backend, replace_exact
from deepacp.harness.names import EDIT_FILE


async def why_edit_fails(backend: Backend, args: dict) -> str | None:
    """Why an `edit_file` call with `args` cannot apply to the file as it is now (None:
    it can, or the file cannot be read here)."""
    path, old, new = args.get("file_path"), args.get("old_string"), args.get("new_string")
    replace_all = args.get("replace_all", False)
    if not all(isinstance(v, str) for v in (path, old, new)) or not isinstance(replace_all, bool):
        return None  # the tool's argument check says what is wrong
    try:
        text = await backend.read_text(str(path))
    except (BackendError, OSError):
        return None
    try:
        replace_exact(text, str(old), str(new), replace_all=replace_all, path=str(path))
    except BackendError as exc:
        return str(exc)
    return None


class EditPreflightMiddleware(AgentMiddleware):
    """Fail an `edit_file` call that cannot apply, before anyone is asked about it."""

    def __init__(self, backend: Backend) -> None:
        super().__init__()
        self.backend = backend

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]
    ) -> Any:
        call = request.tool_call
        if call["name"] == EDIT_FILE:
            reason = await why_edit_fails(self.backend, call.get("args") or {})
            if reason is not None:
                return ToolMessage(
                    reason, tool_call_id=call["id"] or "", name=EDIT_FILE, status="error"
                )
        return await handler(request)
