"""A local Anthropic Messages API (`POST /v1/messages`) for tests of the real client library.

Speaks the documented wire format (streaming guide, platform.claude.com/docs/en/
build-with-claude/streaming): `message_start`, `ping`, `content_block_start` / `_delta` /
`_stop` with `thinking_delta`, `signature_delta`, `text_delta` and `input_json_delta`,
`message_delta` with the stop reason and cumulative usage, `message_stop`, and a mid-stream
`error` event when scripted; non-streaming requests get the whole Message as JSON. Errors
use the documented shape (errors page): `{"type": "error", "error": {"type", "message"}}`.

Every request is validated by `anthropic_rules` first and accounted by `anthropic_cache`;
a request over `context_window` tokens gets the real "prompt is too long" 400.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from tests.providers.anthropic_cache import CacheUsage, PromptCache, total_tokens
from tests.providers.anthropic_rules import check_headers, validate
from tests.providers.signatures import Signer
from tests.providers.tokens import count
from tests.providers.wire import Exchange, Failure, InvalidRequest, Reply, Step, WireServer, chunks

# Errors page: HTTP status -> error type, with the API's usual message.
ERRORS = {
    400: ("invalid_request_error", "Invalid request"),
    401: ("authentication_error", "invalid x-api-key"),
    403: (
        "permission_error",
        "Your API key does not have permission to use the specified resource.",
    ),
    404: ("not_found_error", "Not found"),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
    500: ("api_error", "Internal server error"),
    529: ("overloaded_error", "Overloaded"),
}
MESSAGES = dict(ERRORS.values())


class AnthropicServer(WireServer):
    """Scripted `/v1/messages`; `cache` holds the prompt cache, `signer` signs thinking."""

    routes: ClassVar[dict[tuple[str, str], str]] = {
        ("POST", "/v1/messages"): "_messages",
        ("POST", "/v1/messages/count_tokens"): "_count_tokens",
        ("GET", "/v1/models"): "_models",
    }

    def __init__(
        self,
        script: Iterable[Step] = (),
        *,
        context_window: int = 200_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(script)
        self.context_window = context_window
        self.signer = Signer()
        self.cache = PromptCache(clock)
        self._ids = itertools.count(1)
        self.listed = ["claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"]

    def error_body(self, error: InvalidRequest) -> Any:
        return {"type": "error", "error": {"type": error.kind, "message": error.message}}

    def usages(self) -> list[dict[str, Any]]:
        """The usage reported for each answered model request, in order."""
        return [r.usage for r in self.model_requests("/v1/messages") if r.usage]

    def _models(self, exchange: Exchange) -> None:
        """Models API, list models: newest first, one page."""
        check_headers(exchange.headers, self.keys)
        data = [
            {"type": "model", "id": m, "display_name": m, "created_at": "2025-09-29T00:00:00Z"}
            for m in self.listed
        ]
        first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
        exchange.send_json(
            200, {"data": data, "has_more": False, "first_id": first, "last_id": last}
        )

    def _messages(self, exchange: Exchange) -> None:
        check_headers(exchange.headers, self.keys)
        body = exchange.body
        turns = validate(body, self.signer)
        size = total_tokens(body, turns)
        if size > self.context_window:
            raise InvalidRequest(
                f"prompt is too long: {size} tokens > {self.context_window} maximum"
            )
        step = self.next_step(body)
        if isinstance(step, Failure):
            self._fail(exchange, step)
            return
        usage = self.cache.account(body, turns)
        blocks = self._blocks(step)
        output = sum(count(_generated(b)) for b in blocks) or 1
        exchange.record.usage = {**usage.wire(), "output_tokens": output}
        stop = step.stop or ("tool_use" if step.tool_calls else "end_turn")
        message = {
            "id": f"msg_test{next(self._ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": exchange.record.usage,
        }
        if body.get("stream"):
            self._stream(exchange, step, message, usage)
        else:
            exchange.send_json(200, message, {"request-id": message["id"]})

    def _count_tokens(self, exchange: Exchange) -> None:
        check_headers(exchange.headers, self.keys)
        body = exchange.body
        turns = validate({**body, "max_tokens": 1} if isinstance(body, dict) else body, self.signer)
        exchange.send_json(200, {"input_tokens": total_tokens(body, turns)})

    def _fail(self, exchange: Exchange, failure: Failure) -> None:
        kind, default = ERRORS.get(failure.status, ("api_error", "Internal server error"))
        headers = {
            "x-should-retry": "true"
            if failure.status in (408, 409, 429) or failure.status >= 500
            else "false"
        }
        if failure.retry_after is not None:
            headers["retry-after"] = f"{failure.retry_after:g}"
        error = InvalidRequest(failure.message or default, status=failure.status, kind=kind)
        exchange.record.error = error.message
        exchange.send_json(failure.status, self.error_body(error), headers)

    def _blocks(self, reply: Reply) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if reply.thinking is not None:
            signature = self.signer.sign(reply.thinking)
            blocks.append({"type": "thinking", "thinking": reply.thinking, "signature": signature})
        if reply.redacted_thinking:
            blocks.append({"type": "redacted_thinking", "data": self.signer.redacted("hidden")})
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        for call in reply.tool_calls:
            call.id = call.id or f"toolu_test{next(self._ids):06d}"
            blocks.append(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": call.args}
            )
        return blocks

    def _stream(
        self, exchange: Exchange, reply: Reply, message: dict[str, Any], usage: CacheUsage
    ) -> None:
        exchange.start_stream("text/event-stream")
        send = _sse_sender(exchange)
        start_usage = {**usage.wire(), "output_tokens": 1}
        send(
            {
                "type": "message_start",
                "message": {**message, "content": [], "stop_reason": None, "usage": start_usage},
            }
        )
        send({"type": "ping"})
        calls = iter(reply.tool_calls)
        for index, block in enumerate(message["content"]):
            self.pause(reply.delay)
            send({"type": "content_block_start", "index": index, "content_block": _opening(block)})
            deltas = _deltas(
                block, next(calls) if block["type"] == "tool_use" else None, reply.chunk
            )
            for delta in deltas:
                self.pause(reply.delay)
                send({"type": "content_block_delta", "index": index, "delta": delta})
                if reply.stream_error:
                    message = MESSAGES.get(reply.stream_error, "Internal server error")
                    send(
                        {"type": "error", "error": {"type": reply.stream_error, "message": message}}
                    )
                    return
            send({"type": "content_block_stop", "index": index})
        self.pause(reply.delay)
        delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
        send({"type": "message_delta", "delta": delta, "usage": message["usage"]})
        send({"type": "message_stop"})


def _sse_sender(exchange: Exchange) -> Callable[[dict[str, Any]], None]:
    def send(event: dict[str, Any]) -> None:
        exchange.write_chunk(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())

    return send


def _opening(block: dict[str, Any]) -> dict[str, Any]:
    """The block as `content_block_start` announces it, before its deltas."""
    if block["type"] == "thinking":
        return {"type": "thinking", "thinking": "", "signature": ""}
    if block["type"] == "text":
        return {"type": "text", "text": ""}
    if block["type"] == "tool_use":
        return {**block, "input": {}}
    return block


def _deltas(block: dict[str, Any], call: Any, size: int) -> list[dict[str, Any]]:
    if block["type"] == "thinking":
        pieces = [
            {"type": "thinking_delta", "thinking": p} for p in chunks(block["thinking"], size)
        ]
        return [*pieces, {"type": "signature_delta", "signature": block["signature"]}]
    if block["type"] == "text":
        return [{"type": "text_delta", "text": p} for p in chunks(block["text"], size)]
    if block["type"] == "tool_use":
        return [
            {"type": "input_json_delta", "partial_json": p} for p in chunks(call.arguments, size)
        ]
    return []


def _generated(block: dict[str, Any]) -> str:
    return block.get("thinking") or block.get("text") or json.dumps(block.get("input") or "")
