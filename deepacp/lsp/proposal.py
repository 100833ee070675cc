"""A proposal: the agent's changes as hunks the user accepts or rejects one by one.

Hunks are computed against the text the agent started from (the editor's buffer, unsaved
changes included). To apply one later, its old lines are looked for in the document as it
is *now*: at the expected place (shifted by hunks already accepted above it) or nearby. A
hunk whose old lines are gone — the user changed the text under it — is stale and is
refused, never applied blindly.
"""

from __future__ import annotations

import difflib
import itertools
from dataclasses import dataclass, field
from typing import Literal

SEARCH_WINDOW = 200
HunkState = Literal["pending", "accepted", "rejected"]

_ids = itertools.count(1)


@dataclass
class Hunk:
    id: str
    start: int
    """Line (0-based) in the original text where the old lines begin."""
    old_lines: list[str]
    new_lines: list[str]
    state: HunkState = "pending"

    @property
    def delta(self) -> int:
        return len(self.new_lines) - len(self.old_lines)

    def diff(self, path: str) -> str:
        body = [f"-{line}" for line in self.old_lines] + [f"+{line}" for line in self.new_lines]
        lines = [f"--- a/{path}", f"+++ b/{path}", f"@@ -{self.start + 1},{len(self.old_lines)} @@"]
        return "\n".join(lines + [line.rstrip("\n") for line in body]) + "\n"


@dataclass
class FileChange:
    path: str
    """Absolute path on disk."""
    uri: str
    old_text: str | None
    """None: the agent created the file."""
    new_text: str | None
    """None: the agent deleted the file."""
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def pending(self) -> list[Hunk]:
        return [h for h in self.hunks if h.state == "pending"]


@dataclass
class Proposal:
    id: str
    files: dict[str, FileChange]
    """By document URI."""
    rationale: str = ""

    @property
    def pending(self) -> bool:
        return any(f.pending for f in self.files.values())


def split_lines(text: str | None) -> list[str]:
    return (text or "").splitlines(keepends=True)


def make_hunks(old: str | None, new: str | None) -> list[Hunk]:
    old_lines, new_lines = split_lines(old), split_lines(new)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    hunks = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            hunks.append(Hunk(f"h{next(_ids)}", i1, old_lines[i1:i2], new_lines[j1:j2]))
    return hunks


def make_proposal(
    proposal_id: str, changes: dict[str, tuple[str, str, str | None, str | None]]
) -> Proposal:
    """`changes`: uri -> (absolute path, uri, old text, new text)."""
    files = {
        uri: FileChange(path, uri, old, new, make_hunks(old, new))
        for uri, (path, _, old, new) in changes.items()
    }
    return Proposal(proposal_id, files)


def locate(change: FileChange, hunk: Hunk, current: list[str]) -> int | None:
    """Where `hunk`'s old lines are in the current document, or None (stale)."""
    expected = hunk.start + sum(
        h.delta for h in change.hunks if h.state == "accepted" and h.start < hunk.start
    )
    size = len(hunk.old_lines)

    def matches(at: int) -> bool:
        return 0 <= at <= len(current) - size and current[at : at + size] == hunk.old_lines

    if not hunk.old_lines:
        # A pure insertion: anchor on the line before it (or the start of the file).
        anchor = change_anchor(change, hunk)
        if anchor is None:
            return expected if 0 <= expected <= len(current) else None
        for distance in range(SEARCH_WINDOW):
            for at in (expected - 1 - distance, expected - 1 + distance):
                if 0 <= at < len(current) and current[at] == anchor:
                    return at + 1
        return None
    for distance in range(SEARCH_WINDOW):
        for at in (expected - distance, expected + distance):
            if matches(at):
                return at
    return None


def change_anchor(change: FileChange, hunk: Hunk) -> str | None:
    original = split_lines(change.old_text)
    return original[hunk.start - 1] if 0 < hunk.start <= len(original) else None
