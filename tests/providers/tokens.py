"""Deterministic token estimates for the wire servers' usage and cache accounting.

A real tokenizer is not available offline, and the servers only need counts that are stable
and roughly proportional to size: a value costs one token per 4 characters (rounded up) of
its canonical JSON (sorted keys, no spaces, UTF-8 kept), at least 1. A plain string is
counted as its characters. The same input always gives the same count, so a benchmark can
compare caching on and off exactly.
"""

from __future__ import annotations

import json
from typing import Any


def canonical(value: Any) -> str:
    """The canonical JSON of `value`: what identity and size are computed from."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def count(value: Any) -> int:
    """Estimated tokens of `value` (see the module docstring)."""
    text = value if isinstance(value, str) else canonical(value)
    return max(1, -(-len(text) // 4))
