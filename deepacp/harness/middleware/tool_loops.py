"""ToolLoopMiddleware: a model that repeats the same tool calls is told once, then stopped.

Two patterns count as a loop within one turn (since the user's last message):

- the same call — tool and arguments — `SAME_CALL_LIMIT` times in a row (polling a
  background task is not a loop: its answer changes while it runs);
- an edit undone and redone: a file tool call on a path, identical to an earlier one in the
  turn, after a different call changed that path in between (`edit_file` a→b, b→a, a→b).

The first time, the looping calls are answered in the model's own step with an error that
says what is repeated (nothing runs, no approval is asked), and the model goes on. If it
loops again in the same turn, its reply is replaced by a plain message and the turn ends.
Only the model's step is wrapped: no graph node is added, so a step costs what it did.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain.agents.middleware import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
)
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage

from deepacp.harness.middleware.inbox import is_note
from deepacp.harness.middleware.responses import Response, messages_of, with_messages
from deepacp.harness.names import (
    CHECK_BACKGROUND_TASK,
    LIST_BACKGROUND_TASKS,
    MUTATING_FILE_TOOLS,
)

SAME_CALL_LIMIT = 3
POLLING_TOOLS = frozenset({CHECK_BACKGROUND_TASK, LIST_BACKGROUND_TASKS})
LOOP_MARK = "deepacp_loop"
"""Marks, in additional_kwargs, the answer that told the model about a loop."""
Call = dict[str, Any]


def call_key(call: Call) -> str:
    """A call as the loop checks compare it: its tool and arguments, not its id."""
    return json.dumps([call.get("name"), call.get("args")], sort_keys=True, default=str)


def described(call: Call, limit: int = 160) -> str:
    args = json.dumps(call.get("args") or {}, sort_keys=True, default=str)
    shown = args if len(args) <= limit else f"{args[:limit]}…"
    return f"{call.get('name')} {shown}"


def _path(call: Call) -> str | None:
    args = call.get("args") or {}
    path = args.get("file_path") or args.get("path")
    return path if isinstance(path, str) else None


def turn_calls(messages: Sequence[AnyMessage]) -> tuple[list[Call], bool]:
    """The tool calls made since the user's last message, in order, and whether the model
    was already told about a loop in that time."""
    calls: list[Call] = []
    warned = False
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and not is_note(message):
            break
        if isinstance(message, ToolMessage) and message.additional_kwargs.get(LOOP_MARK):
            warned = True
        if isinstance(message, AIMessage):
            calls[:0] = [dict(c) for c in message.tool_calls]
    return calls, warned


def loop_of(earlier: Sequence[Call], call: Call) -> str | None:
    """What `call`, made after `earlier`, repeats; None when it is no loop."""
    key = call_key(call)
    if call.get("name") not in POLLING_TOOLS:
        run = 1
        for before in reversed(earlier):
            if call_key(before) != key:
                break
            run += 1
        if run >= SAME_CALL_LIMIT:
            return f"the same call {run} times in a row: {described(call)}"
    path = _path(call)
    if call.get("name") in MUTATING_FILE_TOOLS and path is not None:
        changes = [
            call_key(c)
            for c in earlier
            if c.get("name") in MUTATING_FILE_TOOLS and _path(c) == path
        ]
        if key in changes and changes[-1] != key:
            return f"a change to {path} that was undone, made again: {described(call)}"
    return None


def loop_answer(call: Call, what: str) -> ToolMessage:
    """The error answering a looping call (it does not run)."""
    return ToolMessage(
        f"Not run: this repeats {what}. Its result would not change. Use what you learned "
        "from it already and do something different, or finish and tell the user what "
        "blocks you.",
        tool_call_id=call.get("id") or "",
        name=call.get("name") or "",
        status="error",
        additional_kwargs={LOOP_MARK: True},
    )


def loop_ended(what: str) -> AIMessage:
    """The reply that ends a turn which went on looping after the model was told."""
    return AIMessage(
        f"Stopped: the agent kept repeating {what} after it was told once, so this turn "
        "ends here. Send a message to go on.",
        additional_kwargs={LOOP_MARK: True},
    )


class ToolLoopMiddleware(AgentMiddleware):
    """Answers looping tool calls, then ends a turn that keeps looping (see the module)."""

    def _checked(self, request: ModelRequest, response: Response) -> Response:
        inner = messages_of(response)
        reply = next((m for m in reversed(inner.result) if isinstance(m, AIMessage)), None)
        if reply is None or not reply.tool_calls:
            return response
        answered = {m.tool_call_id for m in inner.result if isinstance(m, ToolMessage)}
        earlier, warned = turn_calls(request.messages)
        answers: list[ToolMessage] = []
        for call in reply.tool_calls:
            what = loop_of(earlier, dict(call))
            earlier.append(dict(call))
            if what is None or call.get("id") in answered:
                continue
            if warned:
                return ModelResponse([loop_ended(what)])
            answers.append(loop_answer(dict(call), what))
        if not answers:
            return response
        return with_messages(response, after=answers)

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> Response:
        return self._checked(request, handler(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Response:
        return self._checked(request, await handler(request))
