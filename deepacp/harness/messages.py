"""Helpers for message content, which is a string or a list of content blocks, and for
what a tool result shows people beside what it tells the model."""

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


CARD_TEXT = "deepacp_card_text"
"""The `additional_kwargs` key of a tool result whose text is written for the model (what
to call next, and how often): what its card shows people instead."""


def card_text_of(message: Any) -> str | None:
    """What a tool result's card should say, when the tool said it apart (`CARD_TEXT`)."""
    value = (getattr(message, "additional_kwargs", None) or {}).get(CARD_TEXT)
    return value if isinstance(value, str) else None
