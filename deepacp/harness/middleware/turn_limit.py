"""TurnLimitMiddleware: stop a turn once the model has answered `max_model_calls` times
(`deepacp run --max-turns`), before it is called again. The limit is read from the run's
config, so one graph serves limited and unlimited turns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.config import get_config
from langgraph.errors import GraphRecursionError

from deepacp.harness.middleware.goal import is_feedback
from deepacp.harness.middleware.inbox import is_note

MAX_MODEL_CALLS = "max_model_calls"
"""The run config's `configurable` key that holds the limit (absent: no limit)."""


class TurnLimitReached(GraphRecursionError):
    """The turn used its model calls; it ends as a recursion limit does (`max_turn_requests`)."""


def calls_since_the_user(messages: Sequence[BaseMessage]) -> int:
    """The model's answers since the user's last message (deepacp's notes and the goal
    grader's feedback are not the user's)."""
    calls = 0
    for message in reversed(messages):
        if isinstance(message, HumanMessage) and not is_note(message) and not is_feedback(message):
            break
        calls += isinstance(message, AIMessage)
    return calls


class TurnLimitMiddleware(AgentMiddleware):
    async def abefore_model(self, state: AgentState, runtime: Any) -> dict[str, Any] | None:
        limit = (get_config().get("configurable") or {}).get(MAX_MODEL_CALLS)
        if limit is not None and calls_since_the_user(state["messages"]) >= limit:
            raise TurnLimitReached(f"the turn reached its limit of {limit} model calls")
        return None
