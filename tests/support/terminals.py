"""A turn whose commands run in the editor's terminal (ACP `terminal/*`)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any


@contextlib.asynccontextmanager
async def in_the_editors_terminal(
    agent_factory, editor_client, capabilities, turns: list[dict]
) -> AsyncIterator[tuple[Any, list[dict]]]:
    """One prompt ("run", in yolo mode) of a script of `turns`, from an editor that offers
    its terminal: the agent, and the `terminal/create` requests the turn sent."""
    async with agent_factory(
        turns, client=editor_client, capabilities=capabilities(terminal=True)
    ) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        await agent.prompt(session, "run")
        created = [m["params"] for m in agent.wire.incoming if m.get("method") == "terminal/create"]
        yield agent, created
