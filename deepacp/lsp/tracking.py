"""Where each hunk of a proposal is in the document now: its span of lines, mapped through
every change made to the document since the hunk was proposed. Pure.

Each time the document is seen with a new text, the spans are carried from the text seen
before through the line-by-line difference of the two: the user's typing, lines added or
removed above a hunk, an accepted hunk the editor applied, a file changed on disk. Lines
inserted at a span's edge stay outside it; a change inside a span, or overlapping it,
widens the span to cover what is there now (so the text under a hunk the user edited is
what the span holds).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence

Span = tuple[int, int]
"""Lines [start, end) of a document (0-based; start == end: a place between lines)."""
Opcodes = Sequence[tuple[str, int, int, int, int]]


def _starts_at(opcodes: Opcodes, line: int) -> int:
    """Where old line `line` begins in the new text (past lines inserted just before it);
    inside a changed block, the block's start."""
    for tag, a1, a2, b1, _ in opcodes:
        if a1 <= line < a2:
            return b1 + (line - a1) if tag == "equal" else b1
    return opcodes[-1][4] if opcodes else 0  # the end of the text


def _ends_at(opcodes: Opcodes, line: int) -> int:
    """Where old line `line - 1` ends in the new text (before lines inserted just after
    it); inside a changed block, the block's end."""
    if line <= 0:
        return 0
    for tag, a1, a2, b1, b2 in opcodes:
        if a1 <= line - 1 < a2:
            return b1 + (line - a1) if tag == "equal" else b2
    return opcodes[-1][4] if opcodes else 0


def map_span(opcodes: Opcodes, span: Span) -> Span:
    """`span` of the old text in the new one, given the difference between the two."""
    start, end = span
    if start == end:  # a place between lines: right after the line before it
        at = _ends_at(opcodes, start)
        return at, at
    first = _starts_at(opcodes, start)
    return first, max(first, _ends_at(opcodes, end))


class Spans:
    """The spans of some hunks, in the text last seen."""

    def __init__(self, lines: list[str], spans: Mapping[str, Span]) -> None:
        self.lines = lines
        self.spans = dict(spans)

    def follow(self, lines: list[str]) -> None:
        """Carry every span to `lines`, the document's text now."""
        if lines == self.lines:
            return
        matcher = difflib.SequenceMatcher(None, self.lines, lines, autojunk=False)
        opcodes = matcher.get_opcodes()
        self.spans = {key: map_span(opcodes, span) for key, span in self.spans.items()}
        self.lines = list(lines)

    def __getitem__(self, key: str) -> Span:
        return self.spans[key]
