"""What the provider-wire tests share on the client side: a tool to bind, a stream folded
into one message, and the body of a refused request."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.messages.ai import add_ai_message_chunks
from langchain_core.tools import tool


@tool
def read_file(path: str) -> str:
    """Read a file of the workspace."""
    return path


async def collect(model, messages):
    return add_ai_message_chunks(*[chunk async for chunk in model.astream(messages)])


def refused(model, messages, error: type[Exception]) -> Any:
    """The body of the 400 `model` gets for `messages` (fails if it is accepted)."""
    with pytest.raises(error) as raised:
        model.invoke(messages)
    assert raised.value.status_code == 400  # type: ignore[attr-defined]
    return raised.value.body  # type: ignore[attr-defined]


async def failed_once(server, model, failure, error: type[Exception]) -> Any:
    """The `error` `model` raises when `server` answers "hi" with the HTTP `failure`, after
    one request: the client makes no hidden retries."""
    server.add(failure)
    with pytest.raises(error) as raised:
        await collect(model, [HumanMessage("hi")])
    assert raised.value.status_code == failure.status  # type: ignore[attr-defined]
    assert len(server.model_requests()) == 1
    return raised.value


ANSWER = "The answer is forty-two."


async def streamed_answer(server, model) -> list:
    """The chunks of a five-chunk answer `server` streams to `model`, checked whole."""
    from tests.providers.wire import Reply

    server.add(Reply(text=ANSWER, chunk=5))
    chunks = [c async for c in model.astream("What is the answer?")]
    assert "".join(c.text for c in chunks) == ANSWER
    assert sum(1 for c in chunks if c.text) == 5
    return chunks
