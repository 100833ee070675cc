"""A local Ollama API (`/api/chat`, `/api/tags`, `/api/show`) for tests of the real client.

Follows the Ollama API docs (docs/api.md in the Ollama repository, "Generate a chat
completion"): `/api/chat` streams newline-delimited JSON objects, each with `message`
fragments (`content`, `thinking`) and `done: false`; tool calls arrive whole in a message's
`tool_calls` (`function.name` and `function.arguments` as an object); the last object has
`done: true`, `done_reason` and the counts `prompt_eval_count` / `eval_count`. Errors are
`{"error": "..."}` with an HTTP status, or an `error` line mid-stream. `/api/tags` lists the
local models (what ChatOllama's `validate_model_on_init` reads) and `/api/show` describes
one, with its capabilities.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

from tests.providers.tokens import count
from tests.providers.wire import Exchange, Failure, InvalidRequest, Reply, Step, WireServer, chunks

ROLES = ("system", "user", "assistant", "tool")
MODELS = {
    "llama3.2:latest": ("completion", "tools"),
    "qwen3:latest": ("completion", "tools", "thinking"),
}


class OllamaServer(WireServer):
    """Scripted `/api/chat`; `models` maps local model names to their capabilities."""

    routes: ClassVar[dict[tuple[str, str], str]] = {
        ("POST", "/api/chat"): "_chat",
        ("GET", "/api/tags"): "_tags",
        ("POST", "/api/show"): "_show",
    }

    def __init__(
        self, script: Iterable[Step] = (), *, models: dict[str, tuple[str, ...]] | None = None
    ) -> None:
        super().__init__(script)
        self.models = dict(MODELS if models is None else models)

    def error_body(self, error: InvalidRequest) -> Any:
        return {"error": error.message}

    def model_requests(self, path: str | None = None) -> list[Any]:
        return super().model_requests(path or "/api/chat")

    def _tags(self, exchange: Exchange) -> None:
        models = [
            {"name": n, "model": n, "size": 1, "digest": "0" * 64, "details": {}}
            for n in self.models
        ]
        exchange.send_json(200, {"models": models})

    def _show(self, exchange: Exchange) -> None:
        name = self._resolve((exchange.body or {}).get("model"))
        info = {"general.architecture": "llama", "llama.context_length": 131072}
        exchange.send_json(
            200,
            {
                "details": {"format": "gguf"},
                "model_info": info,
                "capabilities": list(self.models[name]),
            },
        )

    def _chat(self, exchange: Exchange) -> None:
        body = exchange.body
        if not isinstance(body, dict):
            raise InvalidRequest("invalid request body")
        name = self._resolve(body.get("model"))
        _validate(body, self.models[name], name)
        step = self.next_step(body)
        if isinstance(step, Failure):
            exchange.record.error = step.message or "server error"
            exchange.send_json(step.status, {"error": exchange.record.error})
            return
        prompt = sum(count(m) for m in body.get("messages") or []) + sum(
            count(t) for t in body.get("tools") or []
        )
        generated = count(
            step.text + (step.thinking or "") + "".join(c.arguments for c in step.tool_calls)
        )
        exchange.record.usage = {"prompt_eval_count": prompt, "eval_count": generated}
        final = {
            "done": True,
            "done_reason": "length" if step.stop == "max_tokens" else "stop",
            "total_duration": 1000,
            "load_duration": 10,
            "prompt_eval_count": prompt,
            "prompt_eval_duration": 100,
            "eval_count": generated,
            "eval_duration": 500,
        }
        head = {
            "model": body["model"],
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        if body.get("stream") is False:
            message = {"role": "assistant", "content": step.text}
            if step.thinking is not None:
                message["thinking"] = step.thinking
            if step.tool_calls:
                message["tool_calls"] = [_call(c) for c in step.tool_calls]
            exchange.send_json(200, {**head, "message": message, **final})
            return
        exchange.start_stream("application/x-ndjson")
        for n, message in enumerate(_fragments(step)):
            self.pause(step.delay)
            exchange.write_chunk(_line({**head, "message": message, "done": False}))
            if step.stream_error and n == 0:
                exchange.write_chunk(_line({"error": step.stream_error}))
                return
        exchange.write_chunk(
            _line({**head, "message": {"role": "assistant", "content": ""}, **final})
        )

    def _resolve(self, model: Any) -> str:
        # API docs, model names: `name` means `name:latest`; unknown models are a 404.
        if not model:
            raise InvalidRequest("model is required")
        name = model if ":" in model else f"{model}:latest"
        if name not in self.models:
            raise InvalidRequest(f'model "{model}" not found, try pulling it first', status=404)
        return name


def _validate(body: dict[str, Any], capabilities: tuple[str, ...], name: str) -> None:
    """API docs, chat request: message roles, string content, base64 images, tool calls
    with object arguments; tools and `think` only on models with those capabilities."""
    if body.get("tools") and "tools" not in capabilities:
        raise InvalidRequest(f"registry.ollama.ai/library/{name} does not support tools")
    if body.get("think") not in (None, False) and "thinking" not in capabilities:
        raise InvalidRequest(f'"{body["model"]}" does not support thinking')
    for tool in body.get("tools") or []:
        parameters = (tool.get("function") or {}).get("parameters") or {}
        if tool.get("type") != "function" or parameters.get("type", "object") != "object":
            raise InvalidRequest("json: cannot unmarshal tool: invalid function definition")
    for message in body.get("messages") or []:
        if message.get("role") not in ROLES:
            raise InvalidRequest(f"invalid role: {message.get('role')!r}")
        if not isinstance(message.get("content", ""), str):
            raise InvalidRequest(
                "json: cannot unmarshal array into Go struct field "
                "Message.messages.content of type string"
            )
        if not all(isinstance(i, str) for i in message.get("images") or []):
            raise InvalidRequest("illegal base64 data in images")
        for call in message.get("tool_calls") or []:
            if not isinstance((call.get("function") or {}).get("arguments"), dict):
                raise InvalidRequest(
                    "json: cannot unmarshal string into Go struct field "
                    "ToolCallFunction.messages.tool_calls.function.arguments of type "
                    "api.ToolCallFunctionArguments"
                )


def _fragments(reply: Reply) -> Iterator[dict[str, Any]]:
    for piece in chunks(reply.thinking or "", reply.chunk):
        yield {"role": "assistant", "content": "", "thinking": piece}
    for piece in chunks(reply.text, reply.chunk):
        yield {"role": "assistant", "content": piece}
    if reply.tool_calls:
        yield {
            "role": "assistant",
            "content": "",
            "tool_calls": [_call(c) for c in reply.tool_calls],
        }


def _call(call: Any) -> dict[str, Any]:
    return {"function": {"name": call.name, "arguments": call.args}}


def _line(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload).encode() + b"\n"
