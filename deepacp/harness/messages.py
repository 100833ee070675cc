"""Helpers for message content, which is a string or a list of content blocks."""

from __future__ import annotations

from typing import Any


def text_of(content: Any, separator: str = "") -> str:
    """The text parts of a message's content, joined."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return separator.join(parts)
