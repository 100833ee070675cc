"""RepetitionGuardMiddleware: a model call that repeats itself is stopped mid-stream.

While a reply streams, its text and thinking are fed to a `RepetitionDetector`
(`deepacp.harness.repetition`); when one n-gram has repeated past the threshold, the call
is stopped there (the stream is dropped: a local server stops generating). The first time
in a turn, the reply is kept up to the loop, and the model is told what it repeated and
called again. If it loops again in the same turn, the turn ends with a plain message and
stop reason `max_tokens` instead of paying for the same loop once more. A reply that was not
streamed is checked whole when it arrives.

The note to the model is marked as deepacp's (`is_note`), so it is not shown as the user's
words; it goes into the thread with the reply, so the whole turn sees it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain.agents.middleware import (
    AgentMiddleware,
    ModelRequest,
    ModelResponse,
)
from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables.config import var_child_runnable_config

from deepacp.harness.messages import text_of
from deepacp.harness.middleware.inbox import NOTE_KIND, is_note
from deepacp.harness.middleware.responses import Response, messages_of, with_messages
from deepacp.harness.repetition import Repetition, RepetitionDetector, repetition_in

REPETITION_NOTE = "repetition"
LOOP_STOP = "length"
"""The stop reason of the reply that ends a looping turn (the client sees `max_tokens`)."""


class Repeating(Exception):
    """Raised from the stream to stop a model call that loops."""

    def __init__(self, found: Repetition, message_id: str | None) -> None:
        super().__init__(f"the model kept repeating {found.phrase!r}")
        self.found = found
        self.message_id = message_id


def _not_a_stopped_loop(record: logging.LogRecord) -> bool:
    """LangChain logs every exception a callback raises; a stopped loop is no error."""
    return not any(isinstance(arg, Repeating) for arg in record.args or ())


logging.getLogger("langchain_core.callbacks.manager").addFilter(_not_a_stopped_loop)


def repetition_note(phrase: str) -> HumanMessage:
    """What the model is told, once a turn, when its reply was stopped."""
    return HumanMessage(
        f'Your last reply was stopped because it kept repeating "{phrase}". Do not repeat '
        "it: go on with the task in a different way, or finish your answer briefly.",
        additional_kwargs={NOTE_KIND: REPETITION_NOTE},
    )


def loop_ended(phrase: str) -> AIMessage:
    """The turn's last reply after a second loop: what the user reads."""
    return AIMessage(
        f'Stopped: the model kept repeating "{phrase}" after it was told once, so this turn '
        "ends here. Send a message to go on.",
        response_metadata={"finish_reason": LOOP_STOP},
    )


def warned_this_turn(messages: Sequence[AnyMessage]) -> bool:
    """Whether the model was told about a loop since the user's last message."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            if message.additional_kwargs.get(NOTE_KIND) == REPETITION_NOTE:
                return True
            if not is_note(message):
                return False
    return False


def _streamed_text(token: Any, message: Any) -> str:
    """The text and thinking a stream chunk adds."""
    text = token if isinstance(token, str) else text_of(token)
    if message is None:
        return text
    reasoning = message.additional_kwargs.get("reasoning_content")
    parts = [text, reasoning if isinstance(reasoning, str) else ""]
    if isinstance(message.content, list):
        parts += [
            str(block.get("thinking") or block.get("reasoning") or "")
            for block in message.content
            if isinstance(block, dict)
        ]
    return "".join(parts)


class StreamWatch(BaseCallbackHandler):
    """Feeds a model call's stream to a detector and stops the call at a loop."""

    run_inline = True
    raise_error = True

    def __init__(self) -> None:
        self.detector = RepetitionDetector()
        self.message_id: str | None = None
        self.streamed = False

    def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
        """Nothing to do; defined so LangChain does not render the whole transcript as
        text for `on_llm_start`, which it does for handlers without it."""

    def on_llm_new_token(self, token: Any, *, chunk: Any = None, **kwargs: Any) -> None:
        message = getattr(chunk, "message", None)
        self.streamed = True
        if message is not None and message.id and self.message_id is None:
            self.message_id = message.id
        if found := self.detector.feed(_streamed_text(token, message)):
            raise Repeating(found, self.message_id)


@contextlib.contextmanager
def watching(watch: StreamWatch) -> Iterator[None]:
    """Model calls made inside this block report their stream to `watch` too."""
    config = var_child_runnable_config.get() or {}
    callbacks = config.get("callbacks")
    if isinstance(callbacks, BaseCallbackManager):
        callbacks = callbacks.copy()
        callbacks.add_handler(watch, inherit=True)
    else:
        callbacks = [*(callbacks or []), watch]
    token = var_child_runnable_config.set({**config, "callbacks": callbacks})
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)


def _whole_reply_loop(response: Response) -> Repeating | None:
    """A loop in a reply that arrived whole (not streamed)."""
    replies = reversed(messages_of(response).result)
    reply = next((m for m in replies if isinstance(m, AIMessage)), None)
    found = repetition_in(text_of(reply.content)) if reply is not None else None
    return Repeating(found, reply.id) if found is not None and reply is not None else None


@dataclass
class _Call:
    """One model call watched for a loop: what it answered, or the loop that stopped it
    and the messages that stand for it then."""

    response: Response | None = None
    stop: Repeating | None = None
    said: list[AnyMessage] = field(default_factory=list)

    @property
    def answer(self) -> Response:
        if self.response is None:
            raise RuntimeError("the model call has not answered")
        return self.response


@contextlib.contextmanager
def _watched() -> Iterator[_Call]:
    """Watch the model call made inside (setting `response`) for a loop, in its stream or
    in its whole reply."""
    call, watch = _Call(), StreamWatch()
    try:
        with watching(watch):
            yield call
    except Repeating as raised:
        call.stop = raised
        return
    if not watch.streamed and call.response is not None:
        call.stop = _whole_reply_loop(call.response)


class RepetitionGuardMiddleware(AgentMiddleware):
    """Stops model calls that loop (see the module docstring)."""

    def _again(self, request: ModelRequest, call: _Call) -> ModelRequest | None:
        """The request to make again after a loop, `call.said` kept before its answer; None
        when `call.response` is the answer."""
        if call.stop is None:
            return None
        if warned_this_turn(request.messages):
            call.response = ModelResponse([loop_ended(call.stop.found.phrase)])
            return None
        kept = f"{call.stop.found.before}{call.stop.found.phrase} […]"
        reply = AIMessage(kept, id=call.stop.message_id)  # the id streamed: not shown twice
        call.said = [reply, repetition_note(call.stop.found.phrase)]
        return request.override(messages=[*request.messages, *call.said])

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> Response:
        with _watched() as call:
            call.response = handler(request)
        again = self._again(request, call)
        if again is None:
            return call.answer
        return with_messages(self.wrap_model_call(again, handler), before=call.said)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Response:
        with _watched() as call:
            call.response = await handler(request)
        again = self._again(request, call)
        if again is None:
            return call.answer
        return with_messages(await self.awrap_model_call(again, handler), before=call.said)
