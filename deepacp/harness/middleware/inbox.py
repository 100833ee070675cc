"""InboxMiddleware: what reached the agent while it worked joins the conversation before
its next model call — a message the user steered into the running turn, a note of what
the user did to the agent's changes in review.

The harness does not know where messages come from: the caller passes an `Inbox`, a
callable that hands over (and forgets) what has arrived since it was last asked. Messages
are added to the thread, so every later call sees them too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain_core.messages import BaseMessage, HumanMessage

Inbox = Callable[[], Awaitable[Sequence[BaseMessage]]]
NOTE_KIND = "deepacp_note"
"""Marks a message deepacp wrote for the model (not the user's words) in additional_kwargs."""
REVIEW_NOTE = "review"


def review_message(note: str) -> HumanMessage:
    """The review note as the model reads it: a user-role message marked as deepacp's."""
    return HumanMessage(content=note, additional_kwargs={NOTE_KIND: REVIEW_NOTE})


def is_note(message: BaseMessage) -> bool:
    """Whether deepacp wrote this message for the model (a replay leaves it out)."""
    return NOTE_KIND in message.additional_kwargs


class InboxMiddleware(AgentMiddleware):
    def __init__(self, inbox: Inbox) -> None:
        super().__init__()
        self.inbox = inbox

    async def abefore_model(self, state: AgentState, runtime: Any) -> dict[str, Any] | None:
        arrived = list(await self.inbox())
        return {"messages": arrived} if arrived else None
