"""How a prompt begins: the parts are told where the thread stands; and a prompt cancelled
before it began (the graph still loading) is kept as one that began and stopped at once."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import Any

from deepacp.harness import text_of
from deepacp.session.context import SessionContext
from deepacp.session.parts.base import Part, PromptStart, each_part, title_from

log = logging.getLogger(__name__)

Content = str | list[dict]


async def begin(
    ctx: SessionContext, parts: Sequence[Part], graph: Any, content: Content, ran: list[str]
) -> tuple[PromptStart, Any]:
    """A prompt begins (its id added to `ran`): the parts are told where the thread stands
    (its state, returned)."""
    state = await graph.aget_state(ctx.config)
    checkpoint = state.config.get("configurable", {}).get("checkpoint_id")
    text = content if isinstance(content, str) else text_of(content)
    start = PromptStart(uuid.uuid4().hex, title_from(text), ctx.record.thread_id, checkpoint)
    ran.append(start.message_id)
    await each_part(parts, lambda part: part.prompt_started(start))
    return start, state


async def keep_cancelled(ctx: SessionContext, parts: Sequence[Part], content: Content) -> None:
    """Keep a prompt cancelled before it began: in the thread, with a restore point and
    the session's title, as if it began and stopped at once."""
    from deepacp.session.turns.turn import user_message

    try:
        graph = await ctx.graph()
        start, _ = await begin(ctx, parts, graph, content, [])
        try:
            await graph.aupdate_state(
                ctx.config, user_message(content, start.message_id), as_node="model"
            )
        finally:
            ctx.update()
            await each_part(parts, lambda part: part.prompt_ended(start))
    except Exception:
        log.exception("could not keep the prompt cancelled in session %s", ctx.record.id)
