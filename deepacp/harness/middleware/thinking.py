"""ThoughtOnlyRepliesMiddleware: a reply that was only thinking stays out of later requests.

A model may end its turn with reasoning and nothing else. The state keeps that reply (it
is replayed as the agent's thought), but providers refuse it in a history: Anthropic
rejects any request whose assistant message ends in a `thinking` block ("The final block
in an assistant message cannot be `thinking`"), every later turn of the thread included.
The model's view leaves such replies out; the user messages around them are merged by
the provider, and thinking of earlier turns is dropped by Anthropic anyway.
"""

from __future__ import annotations

from langchain.agents.middleware import ModelRequest
from langchain_core.messages import AIMessage, AnyMessage

from deepacp.harness.messages import text_of
from deepacp.harness.middleware.model_view import ModelViewMiddleware


def thought_only(message: AnyMessage) -> bool:
    """An AI reply with no text and no tool calls (what is left is reasoning, if anything)."""
    return (
        isinstance(message, AIMessage)
        and not message.tool_calls
        and not message.invalid_tool_calls
        and not text_of(message.content).strip()
    )


class ThoughtOnlyRepliesMiddleware(ModelViewMiddleware):
    """Leaves thought-only replies out of the model's view (see the module docstring)."""

    def _view(self, request: ModelRequest) -> ModelRequest:
        messages = request.messages
        kept = [m for m in messages if not thought_only(m)]
        return request if len(kept) == len(messages) else request.override(messages=kept)
