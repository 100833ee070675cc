"""A local OpenAI API (`/v1/chat/completions` and `/v1/responses`) for tests of the real client.

Chat Completions streaming follows the API reference ("The chat completion chunk object"):
a first chunk with the assistant role, text in `delta.content`, tool calls chunked by
`index` (id, type and name in the first chunk of a call, arguments split over the next), a
last choice chunk with `finish_reason` (`stop`, `tool_calls`, `length`), then, when
`stream_options.include_usage` is set, a chunk with empty `choices` and the usage (with
`prompt_tokens_details.cached_tokens`), then `data: [DONE]`. Errors use the documented
`{"error": {"message", "type", "param", "code"}}` shape. The Responses API is rendered by
`openai_responses`. Requests are validated by `openai_rules`; cached tokens come from
`openai_cache`.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, ClassVar

from tests.providers.openai_cache import PrefixCache
from tests.providers.openai_responses import output_items, response_object, stream_events
from tests.providers.openai_rules import check_auth, validate_chat, validate_responses
from tests.providers.tokens import count
from tests.providers.wire import Exchange, Failure, InvalidRequest, Reply, Step, WireServer, chunks

# Error codes page: status -> (type, code, usual message).
ERRORS = {
    400: ("invalid_request_error", None, "Invalid request"),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    404: ("invalid_request_error", "model_not_found", "The model does not exist."),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests per min (RPM)."),
    500: (
        "server_error",
        None,
        "The server had an error while processing your request. Sorry about that!",
    ),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
}
FINISH = {"max_tokens": "length"}


class OpenAIServer(WireServer):
    """Scripted Chat Completions and Responses; `cache` holds the automatic prefix cache."""

    routes: ClassVar[dict[tuple[str, str], str]] = {
        ("POST", "/v1/chat/completions"): "_chat",
        ("POST", "/v1/responses"): "_responses",
        ("GET", "/v1/models"): "_models",
    }

    def __init__(
        self,
        script: Iterable[Step] = (),
        *,
        context_window: int = 128_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(script)
        self.context_window = context_window
        self.cache = PrefixCache(clock)
        self._ids = itertools.count(1)
        self.listed = ["gpt-5.1", "gpt-4.1"]

    def error_body(self, error: InvalidRequest) -> Any:
        extra = {"param": None, "code": None, **error.extra}
        return {"error": {"message": error.message, "type": error.kind, **extra}}

    def _models(self, exchange: Exchange) -> None:
        """Models, list: every model the key may use, as `model` objects. A llama.cpp, LM
        Studio or vLLM server answers the same shape (without asking for a key)."""
        if self.keys is not None:
            check_auth(exchange.headers, self.keys)
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in self.listed]
        exchange.send_json(200, {"object": "list", "data": data})

    def _chat(self, exchange: Exchange) -> None:
        check_auth(exchange.headers, self.keys)
        body = exchange.body
        validate_chat(body)
        step = self._step(exchange, [*(body.get("tools") or []), *body["messages"]])
        if step is None:
            return
        reply, prompt, cached = step
        calls = [self._tool_call(c) for c in reply.tool_calls]
        finish = FINISH.get(reply.stop or "", reply.stop) or ("tool_calls" if calls else "stop")
        usage = _chat_usage(prompt, cached, reply)
        exchange.record.usage = usage
        cid = f"chatcmpl-test{next(self._ids):06d}"
        if not body.get("stream"):
            message = {"role": "assistant", "content": reply.text or None, "refusal": None}
            if calls:
                message["tool_calls"] = calls
            choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
            exchange.send_json(
                200, {**_head(cid, body, "chat.completion"), "choices": [choice], "usage": usage}
            )
            return
        exchange.start_stream("text/event-stream")
        with_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        head = _head(cid, body, "chat.completion.chunk") | ({"usage": None} if with_usage else {})
        for n, delta in enumerate(_chat_deltas(reply, calls)):
            self.pause(reply.delay)
            exchange.write_chunk(_sse({**head, "choices": [_choice(delta)]}))
            if reply.stream_error and n == 1:
                error = {
                    "message": ERRORS[500][2],
                    "type": reply.stream_error,
                    "param": None,
                    "code": None,
                }
                exchange.write_chunk(_sse({"error": error}))
                return
        exchange.write_chunk(_sse({**head, "choices": [_choice({}, finish)]}))
        if with_usage:
            exchange.write_chunk(_sse({**head, "choices": [], "usage": usage}))
        exchange.write_chunk(b"data: [DONE]\n\n")

    def _responses(self, exchange: Exchange) -> None:
        check_auth(exchange.headers, self.keys)
        body = exchange.body
        items = validate_responses(body)
        step = self._step(exchange, [*(body.get("tools") or []), body.get("instructions"), *items])
        if step is None:
            return
        reply, prompt, cached = step
        output = output_items(reply, self._ids)
        generated = count(
            reply.text + (reply.thinking or "") + "".join(c.arguments for c in reply.tool_calls)
        )
        usage = {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": generated,
            "output_tokens_details": {
                "reasoning_tokens": count(reply.thinking) if reply.thinking else 0
            },
            "total_tokens": prompt + generated,
        }
        exchange.record.usage = usage
        response = response_object(body, f"resp_test{next(self._ids):06d}", output, usage, reply)
        if not body.get("stream"):
            exchange.send_json(200, response)
            return
        exchange.start_stream("text/event-stream")
        for event in stream_events(response, reply):
            self.pause(reply.delay)
            exchange.write_chunk(f"event: {event['type']}\n".encode() + _sse(event))

    def _step(self, exchange: Exchange, units: list[Any]) -> tuple[Reply, int, int] | None:
        """Check the context window, take the next step; None when it was a Failure."""
        body = exchange.body
        size = sum(count(u) for u in units)
        if size > self.context_window:
            raise InvalidRequest(
                f"This model's maximum context length is {self.context_window} tokens. However, "
                f"your messages resulted in {size} tokens. Please reduce the length of the "
                "messages.",
                param="messages",
                code="context_length_exceeded",
            )
        step = self.next_step(body)
        if isinstance(step, Failure):
            kind, code, default = ERRORS.get(step.status, ERRORS[500])
            headers = {
                "x-should-retry": "true" if step.status == 429 or step.status >= 500 else "false"
            }
            if step.retry_after is not None:
                headers["retry-after"] = f"{step.retry_after:g}"
            error = InvalidRequest(
                step.message or default, status=step.status, kind=kind, code=code
            )
            exchange.record.error = error.message
            exchange.send_json(step.status, self.error_body(error), headers)
            return None
        prompt, cached = self.cache.account(body, units)
        return step, prompt, cached

    def _tool_call(self, call: Any) -> dict[str, Any]:
        call.id = call.id or f"call_test{next(self._ids):06d}"
        return {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments},
        }


def _head(cid: str, body: dict[str, Any], kind: str) -> dict[str, Any]:
    return {
        "id": cid,
        "object": kind,
        "created": int(time.time()),
        "model": body["model"],
        "system_fingerprint": None,
    }


def _choice(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}


def _chat_deltas(reply: Reply, calls: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    yield {"role": "assistant", "content": "", "refusal": None}
    for piece in chunks(reply.text, reply.chunk):
        yield {"content": piece}
    for index, call in enumerate(calls):
        function = call["function"]
        opening = {**call, "function": {"name": function["name"], "arguments": ""}}
        yield {"tool_calls": [{"index": index, **opening}]}
        for piece in chunks(function["arguments"], reply.chunk):
            yield {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}


def _chat_usage(prompt: int, cached: int, reply: Reply) -> dict[str, Any]:
    reasoning = count(reply.thinking) if reply.thinking else 0
    completion = count(reply.text + "".join(c.arguments for c in reply.tool_calls)) + reasoning
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": reasoning,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def _sse(payload: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(payload)}\n\n".encode()
