"""deepacp's extension methods: `_session/rewind` and `_session/edit_prompt` (their wire
shapes in `rewind.py`), and `_session/steering` (`steering.py`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from acp.exceptions import RequestError

from deepacp.acp import rewind, steering, updates
from deepacp.acp.capabilities import EDIT_PROMPT_METHOD, REWIND_METHOD
from deepacp.acp.rpc import bad_params
from deepacp.acp.turn_result import turn_meta
from deepacp.errors import DeepacpError
from deepacp.events import Notice
from deepacp.session import RestorePart, Session

SessionOf = Callable[[str], Session]
"""The open session of an id (opened now if need be)."""
Spawn = Callable[[Coroutine[Any, Any, None]], None]
"""Runs a coroutine in the background, for as long as the connection lasts."""


async def ext_method(
    method: str, params: dict[str, Any], session_of: SessionOf, spawn: Spawn
) -> dict[str, Any]:
    """Answer an extension request (`method` without its leading `_`)."""
    if method == REWIND_METHOD:
        return await _rewind(rewind.parse(rewind.RewindRequest, params), session_of)
    if method == EDIT_PROMPT_METHOD:
        return await _edit_prompt(rewind.parse(rewind.EditPromptRequest, params), session_of)
    if method == steering.METHOD:
        return await _steer(params, session_of, spawn)
    raise RequestError.method_not_found(f"_{method}")


async def _rewound(
    session: Session, message_id: str, keep_turn: bool, on_conflict: str
) -> dict[str, Any]:
    """Go back to before prompt `message_id` (after its turn, when `keep_turn`),
    cancelling a running turn first; the result's `_meta`."""
    restore = session.part(RestorePart)
    number = restore.number(message_id)
    if number is None:
        raise rewind.unknown_message(message_id, session.id)
    await session.stop()
    if keep_turn and number == len(restore.prompts()):
        return {}  # nothing after it to take back
    force, keep = on_conflict == "restore", on_conflict == "keep"
    done = await restore.rewind(number + 1 if keep_turn else number, force=force, keep=keep)
    if done.conflicts and not (force or keep):
        raise rewind.conflicts_error(done.conflicts)
    return rewind.files_meta(done)


async def _rewind(request: rewind.RewindRequest, session_of: SessionOf) -> dict[str, Any]:
    session = session_of(request.session_id)
    meta = await _rewound(session, request.to_message_id, True, request.on_conflict)
    return {"lastMessageId": request.to_message_id, "_meta": meta}


async def _edit_prompt(request: rewind.EditPromptRequest, session_of: SessionOf) -> dict[str, Any]:
    session = session_of(request.session_id)
    meta = await _rewound(session, request.message_id, False, request.on_conflict)
    stop = await session.prompt(updates.prompt_content(request.content, session.record.cwd))
    turn = turn_meta(session.last_turn_usage, session.last_message_id) or {}
    return {
        "stopReason": stop,
        "messageId": session.last_message_id,
        "_meta": {"deepacp": {**meta.get("deepacp", {}), **turn.get("deepacp", {})}},
    }


async def _steer(params: Any, session_of: SessionOf, spawn: Spawn) -> dict[str, Any]:
    """Into the running turn; with none, a new turn (or back to the client)."""
    try:
        request = steering.parse_steering(params)
    except steering.SteeringParamsError as exc:
        raise bad_params(str(exc)) from None
    session = session_of(request.session_id)
    content = updates.prompt_content(request.prompt, session.record.cwd)
    if await session.steer(content):
        return steering.steering_response("injected")
    if request.prompt_required:
        return steering.steering_response("promptRequired")
    if (turn := session.start(content)) is None:  # one started meanwhile: join it
        await session.steer(content)
        return steering.steering_response("injected")
    spawn(_told_if_it_fails(session, turn))
    return steering.steering_response("startedNewTurn")


async def _told_if_it_fails(session: Session, turn: asyncio.Task) -> None:
    """A turn no `session/prompt` waits for: its failure is told in the chat."""
    try:
        await turn
    except DeepacpError as exc:
        await session.handler.emit(Notice(str(exc), "error"))
