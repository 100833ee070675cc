"""Rendering of a scripted reply as an OpenAI Responses API answer (`POST /v1/responses`).

The documented streaming events (API reference, "Streaming events"): `response.created`,
`response.in_progress`, `response.output_item.added` / `.done` for each output item,
`response.reasoning_summary_part.added` and `response.reasoning_summary_text.delta` for a
reasoning summary, `response.content_part.added`, `response.output_text.delta` / `.done`
for text, `response.function_call_arguments.delta` / `.done` for a function call, and
`response.completed` (or `response.incomplete` when cut by `max_output_tokens`) carrying the
whole Response with its usage. Each event has a `sequence_number`.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from typing import Any

from tests.providers.wire import Reply, chunks


def output_items(reply: Reply, ids: Iterator[int]) -> list[dict[str, Any]]:
    """The Response `output` items for `reply`: reasoning, message, function calls."""
    items: list[dict[str, Any]] = []
    if reply.thinking is not None:
        summary = [{"type": "summary_text", "text": reply.thinking}]
        items.append({"type": "reasoning", "id": f"rs_test{next(ids):06d}", "summary": summary})
    if reply.text:
        part = {"type": "output_text", "text": reply.text, "annotations": [], "logprobs": []}
        items.append(
            {
                "type": "message",
                "id": f"msg_test{next(ids):06d}",
                "status": "completed",
                "role": "assistant",
                "content": [part],
            }
        )
    for call in reply.tool_calls:
        call.id = call.id or f"call_test{next(ids):06d}"
        items.append(
            {
                "type": "function_call",
                "id": f"fc_test{next(ids):06d}",
                "call_id": call.id,
                "name": call.name,
                "arguments": call.arguments,
                "status": "completed",
            }
        )
    return items


def response_object(
    body: dict[str, Any],
    rid: str,
    output: list[dict[str, Any]],
    usage: dict[str, Any],
    reply: Reply,
) -> dict[str, Any]:
    """The whole Response resource, as `response.completed` and non-streaming carry it."""
    truncated = reply.stop == "max_tokens"
    return {
        "id": rid,
        "object": "response",
        "created_at": int(time.time()),
        "status": "incomplete" if truncated else "completed",
        "model": body["model"],
        "output": output,
        "usage": usage,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if truncated else None,
        "instructions": body.get("instructions"),
        "metadata": {},
        "parallel_tool_calls": True,
        "temperature": 1.0,
        "top_p": 1.0,
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "text": {"format": {"type": "text"}},
        "reasoning": body.get("reasoning") or {"effort": None, "summary": None},
        "truncation": "disabled",
        "max_output_tokens": body.get("max_output_tokens"),
        "previous_response_id": body.get("previous_response_id"),
        "prompt_cache_key": body.get("prompt_cache_key"),
        "store": body.get("store", True),
        "background": False,
        "service_tier": "default",
    }


def stream_events(response: dict[str, Any], reply: Reply) -> Iterator[dict[str, Any]]:
    """The streamed events of `response`, with sequence numbers."""
    sequence = itertools.count()
    opening = {**response, "status": "in_progress", "output": [], "usage": None}
    yield {"type": "response.created", "sequence_number": next(sequence), "response": opening}
    yield {"type": "response.in_progress", "sequence_number": next(sequence), "response": opening}
    for index, item in enumerate(response["output"]):
        for event in _item_events(index, item, reply.chunk):
            yield {**event, "sequence_number": next(sequence)}
    final = "response.incomplete" if response["status"] == "incomplete" else "response.completed"
    yield {"type": final, "sequence_number": next(sequence), "response": response}


def _item_events(index: int, item: dict[str, Any], size: int) -> Iterator[dict[str, Any]]:
    where = {"output_index": index, "item_id": item["id"]}
    if item["type"] == "reasoning":
        yield {
            "type": "response.output_item.added",
            "output_index": index,
            "item": {**item, "summary": []},
        }
        text = item["summary"][0]["text"]
        part = {"type": "summary_text", "text": ""}
        yield {
            "type": "response.reasoning_summary_part.added",
            **where,
            "summary_index": 0,
            "part": part,
        }
        for piece in chunks(text, size):
            yield {
                "type": "response.reasoning_summary_text.delta",
                **where,
                "summary_index": 0,
                "delta": piece,
            }
        yield {
            "type": "response.reasoning_summary_text.done",
            **where,
            "summary_index": 0,
            "text": text,
        }
        yield {
            "type": "response.reasoning_summary_part.done",
            **where,
            "summary_index": 0,
            "part": {**part, "text": text},
        }
    elif item["type"] == "message":
        yield {
            "type": "response.output_item.added",
            "output_index": index,
            "item": {**item, "status": "in_progress", "content": []},
        }
        text = item["content"][0]["text"]
        part = {"type": "output_text", "text": "", "annotations": []}
        at = {**where, "content_index": 0}
        yield {"type": "response.content_part.added", **at, "part": part}
        for piece in chunks(text, size):
            yield {"type": "response.output_text.delta", **at, "delta": piece, "logprobs": []}
        yield {"type": "response.output_text.done", **at, "text": text, "logprobs": []}
        yield {"type": "response.content_part.done", **at, "part": {**part, "text": text}}
    else:
        yield {
            "type": "response.output_item.added",
            "output_index": index,
            "item": {**item, "arguments": "", "status": "in_progress"},
        }
        for piece in chunks(item["arguments"], size):
            yield {"type": "response.function_call_arguments.delta", **where, "delta": piece}
        yield {
            "type": "response.function_call_arguments.done",
            **where,
            "arguments": item["arguments"],
        }
    yield {"type": "response.output_item.done", "output_index": index, "item": item}
