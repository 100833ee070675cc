"""Token usage as providers report it, by kind, and how it adds up. Light to import.

`input` is every input token of a call, cached or not (LangChain's `input_tokens`);
`cache_read` and `cache_write` are the parts of it read from and written to the provider's
prompt cache, `reasoning` the part of `output` spent thinking.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

USAGE_KEY = "usage"
"""The state key holding a thread's running totals (`add_usage` sums them)."""
CACHE_WRITE_DETAILS = ("cache_creation", "ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass(frozen=True, slots=True)
class TokenUsage:
    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0
    reasoning: int = 0
    calls: int = 0
    """Model calls that reported usage."""

    @property
    def uncached(self) -> int:
        """Input tokens neither read from nor written to the cache."""
        return max(0, self.input - self.cache_read - self.cache_write)

    @property
    def total(self) -> int:
        return self.input + self.output

    @classmethod
    def of_call(cls, metadata: Mapping[str, Any] | None) -> TokenUsage:
        """One call's usage from an AI message's `usage_metadata` (zero when absent)."""
        if not metadata:
            return cls()
        details = metadata.get("input_token_details") or {}
        output = metadata.get("output_token_details") or {}
        return cls(
            input=_int(metadata.get("input_tokens")),
            cache_read=_int(details.get("cache_read")),
            cache_write=sum(_int(details.get(k)) for k in CACHE_WRITE_DETAILS),
            output=_int(metadata.get("output_tokens")),
            reasoning=_int(output.get("reasoning")),
            calls=1,
        )

    @classmethod
    def from_json(cls, value: Any) -> TokenUsage:
        """What `as_json` stored (unknown keys ignored, missing ones zero)."""
        value = value if isinstance(value, Mapping) else {}
        return cls(**{f.name: _int(value.get(f.name)) for f in fields(cls)})

    def as_json(self) -> dict[str, int]:
        return asdict(self)

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def __sub__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(*(getattr(self, f.name) - getattr(other, f.name) for f in fields(self)))


def add_usage(left: Any, right: Any) -> dict[str, int]:
    """State reducer: running totals of the thread's usage, kept as plain JSON."""
    return (TokenUsage.from_json(left) + TokenUsage.from_json(right)).as_json()
