"""Request validation of the Anthropic Messages API, each rule as the API enforces it.

Every check raises `InvalidRequest` with the message the real API returns (messages quoted
from real 400 bodies where known). Sources, cited per rule: the Messages API reference
(`POST /v1/messages` parameters, as shipped in the SDK's type docs), the tool-use guide, the
extended-thinking guide and the prompt-caching guide on platform.claude.com.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from tests.providers.anthropic_cache import breakpoints, render_blocks
from tests.providers.signatures import Signer
from tests.providers.wire import InvalidRequest

MAX_BREAKPOINTS = 4
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
TOOL_USE_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
THINKING = ("thinking", "redacted_thinking")


def check_headers(headers: dict[str, str], keys: Collection[str] | None = None) -> None:
    """API reference, authentication and versioning: both headers are required (and the key
    one of `keys`, when given)."""
    if not headers.get("x-api-key") and not headers.get("authorization"):
        raise InvalidRequest(
            "x-api-key header is required", status=401, kind="authentication_error"
        )
    bearer = headers.get("authorization", "").removeprefix("Bearer ")
    if keys is not None and (headers.get("x-api-key") or bearer) not in keys:
        # The SDK sends its api_key as `Authorization: Bearer` since its 2.x releases.
        raise InvalidRequest("invalid x-api-key", status=401, kind="authentication_error")
    if not headers.get("anthropic-version"):
        raise InvalidRequest("anthropic-version: header is required")


def validate(body: Any, signer: Signer) -> list[dict[str, Any]]:
    """Check a Messages request; return its turns with consecutive same roles merged."""
    if not isinstance(body, dict):
        raise InvalidRequest("body: Input should be a valid dictionary")
    _check_model_and_limits(body)
    tools = _check_tools(body)
    _check_system(body.get("system"))
    turns = merge_turns(_check_messages(body))
    _check_tool_pairing(turns, tools)
    _check_thinking(body, turns, signer)
    _check_cache_control(body, turns)
    return turns


def merge_turns(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """API reference, `messages`: "Consecutive user or assistant turns in your request will
    be combined into a single turn." Each turn keeps the index of its first message."""
    turns: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if turns and turns[-1]["role"] == message["role"]:
            turns[-1]["content"] = turns[-1]["content"] + list(blocks)
        else:
            turns.append({"role": message["role"], "content": list(blocks), "index": index})
    return turns


def _check_model_and_limits(body: dict[str, Any]) -> None:
    # API reference: `model` and `max_tokens` are required; thinking budget rules are in
    # the extended-thinking guide.
    model = body.get("model")
    if model is None:
        raise InvalidRequest("model: Field required")
    if not isinstance(model, str) or not model:
        raise InvalidRequest("model: String should have at least 1 character")
    max_tokens = body.get("max_tokens")
    if max_tokens is None:
        raise InvalidRequest("max_tokens: Field required")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 0:
        raise InvalidRequest("max_tokens: Input should be a valid integer")


def _check_tools(body: dict[str, Any]) -> set[str]:
    tools = body.get("tools") or []
    names: set[str] = set()
    for i, tool in enumerate(tools):
        if tool.get("type") not in (None, "custom"):
            names.add(tool.get("name", ""))  # server tools have their own schemas
            continue
        name = tool.get("name")
        # Tool-use guide, defining tools: names must match ^[a-zA-Z0-9_-]{1,128}$.
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            raise InvalidRequest(
                f"tools.{i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
            )
        if name in names:
            raise InvalidRequest("tools: Tool names must be unique.")
        names.add(name)
        _check_input_schema(i, tool.get("input_schema"))
    # API reference, `tool_choice`: a named tool must exist; `tool` / `any` need tools.
    choice = body.get("tool_choice")
    if choice:
        kind = choice.get("type")
        if kind not in ("auto", "any", "tool", "none"):
            raise InvalidRequest(
                "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'"
            )
        if kind in ("any", "tool") and not tools:
            raise InvalidRequest(
                "tool_choice: tool_choice may only be specified while providing tools"
            )
        if kind == "tool" and choice.get("name") not in names:
            raise InvalidRequest(f"tool_choice: Tool '{choice.get('name')}' not found in tools")
    return names


def _check_input_schema(i: int, schema: Any) -> None:
    # API reference, `tools`: input_schema is a JSON Schema (draft 2020-12) of an object.
    if schema is None:
        raise InvalidRequest(f"tools.{i}.custom.input_schema: Field required")
    invalid = (
        f"tools.{i}.custom.input_schema: JSON schema is invalid. It must match JSON Schema "
        "draft 2020-12 (https://json-schema.org/draft/2020-12)."
    )
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise InvalidRequest(f"tools.{i}.custom.input_schema.type: Input should be 'object'")
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError:
        raise InvalidRequest(invalid) from None


def _check_system(system: Any) -> None:
    if system is None or isinstance(system, str):
        return
    for block in system:
        _check_text(block, "system")


def _check_text(block: dict[str, Any], where: str) -> None:
    # Real 400s: empty and whitespace-only text blocks are rejected, wherever they are.
    if block.get("type") != "text":
        return
    text = block.get("text")
    if not text:
        raise InvalidRequest(f"{where}: text content blocks must be non-empty")
    if not text.strip():
        raise InvalidRequest(f"{where}: text content blocks must contain non-whitespace text")


def _check_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    messages = body.get("messages")
    if messages is None:
        raise InvalidRequest("messages: Field required")
    if not isinstance(messages, list) or not messages:
        raise InvalidRequest("messages: List should have at least 1 item")
    last = len(messages) - 1
    for i, message in enumerate(messages):
        if message.get("role") not in ("user", "assistant"):
            raise InvalidRequest(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        content = message.get("content")
        if not isinstance(content, (str, list)):
            raise InvalidRequest(f"messages.{i}.content: Input should be a valid list")
        # API reference: only the final assistant message (a prefill) may be empty.
        if not content and not (i == last and message["role"] == "assistant"):
            raise InvalidRequest(
                f"messages.{i}: all messages must have non-empty content except for the "
                "optional final assistant message"
            )
        if isinstance(content, str):
            if content:
                _check_text({"type": "text", "text": content}, "messages")
            continue
        for block in content:
            if not isinstance(block, dict) or "type" not in block:
                raise InvalidRequest(f"messages.{i}.content: Input should be a valid list")
            _check_text(block, "messages")
    return messages


def _check_tool_pairing(turns: list[dict[str, Any]], tools: set[str]) -> None:
    """Tool-use guide, handling tool calls: each tool_use is answered by a tool_result in the
    next (user) message, and tool_result blocks come first in that message's content."""
    seen: set[str] = set()
    for t, turn in enumerate(turns):
        kinds = [b["type"] for b in turn["content"]]
        if ("tool_use" in kinds or "tool_result" in kinds) and not tools:
            raise InvalidRequest(
                "Requests which include `tool_use` or `tool_result` blocks must define tools."
            )
        if turn["role"] == "user":
            previous = turns[t - 1] if t else None
            asked = _tool_use_ids(previous) if previous and previous["role"] == "assistant" else []
            for j, block in enumerate(turn["content"]):
                if block["type"] == "tool_result" and block.get("tool_use_id") not in asked:
                    raise InvalidRequest(
                        f"messages.{turn['index']}.content.{j}: unexpected `tool_use_id` found in "
                        f"`tool_result` blocks: {block.get('tool_use_id')}. Each `tool_result` "
                        "block must have a corresponding `tool_use` block in the previous message."
                    )
            continue
        ids = _tool_use_ids(turn)
        for j, block in enumerate(turn["content"]):
            if block["type"] != "tool_use":
                continue
            if not TOOL_USE_ID.match(str(block.get("id", ""))):
                raise InvalidRequest(
                    f"messages.{turn['index']}.content.{j}.tool_use.id: String should match "
                    "pattern '^[a-zA-Z0-9_-]+$'"
                )
            if block["id"] in seen:
                raise InvalidRequest(
                    f"messages.{turn['index']}.content.{j}: `tool_use` ids must be unique"
                )
            seen.add(block["id"])
        following = turns[t + 1] if t + 1 < len(turns) else None
        answered = _leading_results(following) if following else set()
        missing = [i for i in ids if i not in answered]
        if missing:
            raise InvalidRequest(
                f"messages.{turn['index']}: `tool_use` ids were found without `tool_result` "
                f"blocks immediately after: {', '.join(missing)}. Each `tool_use` block must "
                "have a corresponding `tool_result` block in the next message."
            )


def _tool_use_ids(turn: dict[str, Any]) -> list[str]:
    return [b.get("id") for b in turn["content"] if b["type"] == "tool_use"]


def _leading_results(turn: dict[str, Any]) -> set[str]:
    results: set[str] = set()
    for block in turn["content"]:
        if block["type"] != "tool_result":
            break
        results.add(block.get("tool_use_id"))
    return results


def _check_thinking(body: dict[str, Any], turns: list[dict[str, Any]], signer: Signer) -> None:
    """Extended-thinking guide: budget rules, no forced tool use, and thinking blocks sent
    back unmodified (their signatures are verified wherever they appear)."""
    thinking = body.get("thinking") or {}
    enabled = thinking.get("type") in ("enabled", "adaptive")
    if thinking.get("type") == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            raise InvalidRequest(
                "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
            )
        if budget >= body["max_tokens"]:
            raise InvalidRequest("`max_tokens` must be greater than `thinking.budget_tokens`.")
    if enabled and (body.get("tool_choice") or {}).get("type") in ("any", "tool"):
        raise InvalidRequest("Thinking may not be enabled when tool_choice forces tool use.")
    for turn in turns:
        if turn["role"] != "assistant":
            continue
        where = f"messages.{turn['index']}"
        for j, block in enumerate(turn["content"]):
            if block["type"] == "thinking" and "signature" not in block:
                raise InvalidRequest(f"{where}.content.{j}.thinking.signature: Field required")
            if block["type"] == "thinking" and not signer.verify(
                block.get("thinking", ""), block["signature"]
            ):
                raise InvalidRequest(
                    f"{where}.content.{j}: Invalid `signature` in `thinking` block"
                )
            if block["type"] == "redacted_thinking" and not signer.verify_redacted(
                block.get("data")
            ):
                raise InvalidRequest(
                    f"{where}.content.{j}: Invalid `data` in `redacted_thinking` block"
                )
        if turn["content"] and turn["content"][-1]["type"] == "thinking":
            raise InvalidRequest(
                f"{where}: The final block in an assistant message cannot be `thinking`."
            )
    if enabled:
        _check_tool_loop_starts_with_thinking(turns)


def _check_tool_loop_starts_with_thinking(turns: list[dict[str, Any]]) -> None:
    # Extended-thinking guide, thinking with tool use: in the tool-use loop that is still
    # open (the last user turn carries tool results), the assistant turn must begin with
    # its thinking block, passed back unmodified.
    if len(turns) < 2 or turns[-1]["role"] != "user":
        return
    if not any(b["type"] == "tool_result" for b in turns[-1]["content"]):
        return
    assistant = turns[-2]
    first = assistant["content"][0]["type"] if assistant["content"] else None
    if first not in THINKING:
        raise InvalidRequest(
            f"messages.{assistant['index']}.content.0.type: Expected `thinking` or "
            f"`redacted_thinking`, but found `{first}`. When `thinking` is enabled, a final "
            "`assistant` message must start with a thinking block (preceeding the lastmost set "
            "of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks "
            "from previous turns. To avoid this requirement, disable `thinking`."
        )


def _check_cache_control(body: dict[str, Any], turns: list[dict[str, Any]]) -> None:
    """Prompt-caching guide: at most 4 breakpoints (the automatic one counts), ttl "5m" or
    "1h", not on thinking blocks, and longer-lived breakpoints before shorter ones."""
    blocks = render_blocks(body, turns)
    for block in blocks:
        control = block.cache_control
        if control is None:
            continue
        if block.payload.get("type") in THINKING:
            raise InvalidRequest("cache_control cannot be set on thinking blocks")
        if control.get("type") != "ephemeral" or control.get("ttl", "5m") not in ("5m", "1h"):
            raise InvalidRequest(
                "cache_control: Input should be {'type': 'ephemeral', 'ttl': '5m' | '1h'}"
            )
    points = breakpoints(body, blocks)
    if len(points) > MAX_BREAKPOINTS:
        raise InvalidRequest(
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. "
            f"Found {len(points)}."
        )
    ttls = [ttl for _, ttl in points]
    if "5m" in ttls and "1h" in ttls[ttls.index("5m") :]:
        raise InvalidRequest(
            "a cache_control block with ttl '1h' must not come after one with ttl '5m'"
        )
