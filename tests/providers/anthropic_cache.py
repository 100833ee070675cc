"""Anthropic prompt-cache accounting, following the prompt caching guide's documented rules.

Rules implemented (platform.claude.com/docs/en/build-with-claude/prompt-caching):
- The cacheable prefix is rendered in the order tools, system, messages; a `cache_control`
  breakpoint on a block marks the prefix up to and including that block.
- A top-level `cache_control` ("automatic caching") puts a breakpoint on the last cacheable
  block (thinking blocks cannot carry one) unless that block already has one.
- A prefix at a breakpoint is a cache read when an identical prefix was written before and
  has not expired; the lookback checks the breakpoint and up to 20 block boundaries before
  it, and the longest hit wins. Each hit refreshes the entry's lifetime.
- Breakpoints past the hit write their prefixes (cache write); a prefix shorter than the
  model's minimum cacheable length is neither written nor read (no error).
- Lifetime is 5 minutes by default, 1 hour with `ttl: "1h"`.
- Tool definitions invalidate everything after them; `tool_choice` and `thinking` settings
  invalidate the messages part (the "what invalidates the cache" table): they are folded
  into the identity of the first message block.
- Usage: `input_tokens` is only the part after the last read or written prefix; total input
  is input + cache_creation + cache_read.

Identity is a hash chain over the canonical JSON of each block (without its cache_control),
seeded with the model; tokens come from `tokens.count` per block.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.providers.tokens import canonical, count

LOOKBACK = 20
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
DEFAULT_MINIMUM = 1024
# Minimum cacheable prompt length per model family (the guide's table; first match wins).
MINIMUM_BY_MODEL = (
    ("claude-opus-4-5", 4096),
    ("claude-opus-4-6", 4096),
    ("claude-opus-4-7", 4096),
    ("claude-haiku-4-5", 4096),
    ("claude-sonnet-4-6", 2048),
    ("claude-3-5-haiku", 2048),
    ("claude-3-haiku", 2048),
)


def minimum_cacheable(model: str) -> int:
    """The documented minimum cacheable prompt length for `model` (1024 when not listed)."""
    return next((n for prefix, n in MINIMUM_BY_MODEL if model.startswith(prefix)), DEFAULT_MINIMUM)


@dataclass
class Block:
    """One unit of the rendered prefix: what it is, its breakpoint (if any), its size."""

    section: str  # "tools", "system" or "messages"
    payload: dict[str, Any]
    cache_control: dict[str, Any] | None
    tokens: int


@dataclass
class CacheUsage:
    """How one request's input split: uncached, written to cache (per TTL), read from cache."""

    input_tokens: int
    cache_read_input_tokens: int = 0
    written: dict[str, int] = field(default_factory=lambda: {"5m": 0, "1h": 0})

    @property
    def cache_creation_input_tokens(self) -> int:
        return sum(self.written.values())

    @property
    def total_input_tokens(self) -> int:
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens

    def wire(self) -> dict[str, Any]:
        """The usage fields as the Messages API reports them."""
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": self.written["5m"],
                "ephemeral_1h_input_tokens": self.written["1h"],
            },
        }


def render_blocks(body: dict[str, Any], turns: list[dict[str, Any]]) -> list[Block]:
    """The request's prefix blocks in cache order; `turns` are the merged messages."""
    blocks = [Block("tools", _strip(t), t.get("cache_control"), 0) for t in body.get("tools") or []]
    system = body.get("system") or []
    if isinstance(system, str):
        system = [{"type": "text", "text": system}]
    blocks += [Block("system", _strip(b), b.get("cache_control"), 0) for b in system]
    settings = {"thinking": body.get("thinking"), "tool_choice": body.get("tool_choice")}
    for turn in turns:
        for block in turn["content"]:
            payload = {"role": turn["role"], **_strip(block)}
            if settings is not None:
                payload["settings"] = settings
                settings = None
            blocks.append(Block("messages", payload, block.get("cache_control"), 0))
    for block in blocks:
        block.tokens = count(block.payload)
    return blocks


def breakpoints(body: dict[str, Any], blocks: list[Block]) -> list[tuple[int, str]]:
    """(block index, ttl) of every breakpoint, the automatic one included."""
    points = [
        (i, (b.cache_control or {}).get("ttl", "5m"))
        for i, b in enumerate(blocks)
        if b.cache_control
    ]
    automatic = body.get("cache_control")
    if automatic:
        cacheable = [i for i, b in enumerate(blocks) if b.payload.get("type") not in _THINKING]
        if cacheable and not blocks[cacheable[-1]].cache_control:
            points.append((cacheable[-1], automatic.get("ttl", "5m")))
    return sorted(points)


class PromptCache:
    """The server-side cache: prefix hash -> expiry time, with an injectable clock."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._entries: dict[str, tuple[float, str]] = {}

    def account(self, body: dict[str, Any], turns: list[dict[str, Any]]) -> CacheUsage:
        """Read and write this request's prefixes; return its usage split."""
        blocks = render_blocks(body, turns)
        hashes, totals = _chain(body.get("model", ""), blocks)
        total = totals[-1] if totals else 0
        points = breakpoints(body, blocks)
        minimum = minimum_cacheable(body.get("model", ""))
        now = self.clock()
        hit = max((self._lookup(hashes, index, now) for index, _ in points), default=-1)
        usage = CacheUsage(input_tokens=0)
        if hit >= 0:
            usage.cache_read_input_tokens = totals[hit]
            _, ttl = self._entries[hashes[hit]]
            self._entries[hashes[hit]] = (now + TTL_SECONDS[ttl], ttl)
        cached_to = usage.cache_read_input_tokens
        for index, ttl in points:
            if index <= hit or totals[index] < minimum:
                continue
            self._entries[hashes[index]] = (now + TTL_SECONDS[ttl], ttl)
            usage.written[ttl] += totals[index] - cached_to
            cached_to = totals[index]
        usage.input_tokens = total - cached_to
        return usage

    def _lookup(self, hashes: list[str], index: int, now: float) -> int:
        for i in range(index, max(-1, index - LOOKBACK - 1), -1):
            entry = self._entries.get(hashes[i])
            if entry and entry[0] > now:
                return i
        return -1


def total_tokens(body: dict[str, Any], turns: list[dict[str, Any]]) -> int:
    """The whole request's input size in estimated tokens."""
    return sum(b.tokens for b in render_blocks(body, turns))


_THINKING = ("thinking", "redacted_thinking")


def _strip(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


def _chain(model: str, blocks: list[Block]) -> tuple[list[str], list[int]]:
    hashes, totals = [], []
    digest, running = hashlib.sha256(model.encode()).hexdigest(), 0
    for block in blocks:
        digest = hashlib.sha256((digest + canonical(block.payload)).encode()).hexdigest()
        running += block.tokens
        hashes.append(digest)
        totals.append(running)
    return hashes, totals
