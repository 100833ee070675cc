"""OpenAI's automatic prompt caching, following the prompt caching guide's documented rules.

Rules implemented (developers.openai.com/api/docs/guides/prompt-caching):
- Caching is automatic: no markers; a request reuses the longest prefix an earlier request
  already sent (tools first, then messages / input items, in order).
- Only prompts of 1024 tokens or more are cached, and hits grow in 128-token increments,
  so `cached_tokens` is the hit rounded down to a multiple of 128 (0 below 1024).
- Requests are routed by prefix and `prompt_cache_key`: entries are kept per (model, key).
- Entries live 5 minutes after their last use.

Prefixes are compared at item boundaries (one tool or one message is one unit), sized with
`tokens.count`; identity is a hash chain over the canonical JSON of the units.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

from tests.providers.tokens import canonical, count

MINIMUM = 1024
INCREMENT = 128
LIFETIME = 300.0


class PrefixCache:
    """Prefix hash -> expiry, per (model, prompt_cache_key), with an injectable clock."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._entries: dict[str, float] = {}

    def account(self, body: dict[str, Any], units: list[Any]) -> tuple[int, int]:
        """(prompt tokens, cached tokens) of a request made of `units`; remembers its prefixes."""
        now = self.clock()
        digest = hashlib.sha256(
            canonical([body.get("model"), body.get("prompt_cache_key")]).encode()
        ).hexdigest()
        total, hit = 0, 0
        for unit in units:
            digest = hashlib.sha256((digest + canonical(unit)).encode()).hexdigest()
            total += count(unit)
            if self._entries.get(digest, 0.0) > now:
                hit = total
            self._entries[digest] = now + LIFETIME
        cached = hit // INCREMENT * INCREMENT if hit >= MINIMUM else 0
        return total, cached
