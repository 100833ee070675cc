"""What a prompt's response says besides why the turn stopped: the turn's token usage and
the prompt's id.

The usage goes in the response's `usage` field for a client that reads the unstable schema
(only there does `PromptResponse` have it, in ACP 1.25): one that declared a capability
only that schema has. Any other client finds it in `_meta.deepacp.usage`, as before.
"""

from __future__ import annotations

from typing import Any

from acp import schema as S

from deepacp.acp.newer_schema import declared_of
from deepacp.events import StopReason
from deepacp.session import TokenUsage

UNSTABLE_ONLY = ("plan", "subagents")
"""Client capabilities of the unstable 1.25 schema alone."""


def reads_unstable(capabilities: S.ClientCapabilities) -> bool:
    """Whether the client declared a capability only the unstable schema has."""
    declared = capabilities.model_dump(by_alias=True, exclude_none=True)
    found = any(declared.get(name) is not None for name in UNSTABLE_ONLY)
    return found or declared_of(capabilities).subagents  # the SDK's model has no `subagents`


def turn_usage(usage: TokenUsage) -> S.Usage | None:
    """The turn's tokens in the schema's `Usage` shape (None: no model call). Input counts
    cached tokens too; the cache fields say how many."""
    if not usage.calls:
        return None
    return S.Usage(
        input_tokens=usage.input,
        output_tokens=usage.output,
        total_tokens=usage.total,
        thought_tokens=usage.reasoning,
        cached_read_tokens=usage.cache_read,
        cached_write_tokens=usage.cache_write,
    )


def turn_meta(
    usage: TokenUsage, message_id: str | None = None, *, with_usage: bool = True
) -> dict[str, Any] | None:
    """The prompt response's `_meta`: the turn's usage (`with_usage`: when it has no field
    of its own; the stable `usage_update` reports the context in use, not the turn), and
    the prompt's `messageId` (what `_session/rewind` and `_session/edit_prompt` name, and
    its user chunks carry)."""
    meta: dict[str, Any] = {}
    if with_usage and (fields := turn_usage(usage)) is not None:
        meta["usage"] = fields.model_dump(by_alias=True, exclude_none=True)
    if message_id is not None:
        meta["messageId"] = message_id
    return {"deepacp": meta} if meta else None


def prompt_response(
    stop: StopReason, usage: TokenUsage, message_id: str | None, client: S.ClientCapabilities
) -> S.PromptResponse:
    """The `session/prompt` result, with the usage where the client's schema has it."""
    standard = reads_unstable(client)
    return S.PromptResponse(
        stop_reason=stop,
        usage=turn_usage(usage) if standard else None,
        field_meta=turn_meta(usage, message_id, with_usage=not standard),
    )
