"""A proposal: the agent's changes as hunks the user accepts or rejects one by one.

Hunks are computed against the text the agent started from (the editor's buffer, unsaved
changes included). To apply one later, its old lines are looked for in the document as it
is *now*: at the expected place (shifted by hunks already accepted above it) or nearby. A
hunk whose old lines are gone — the user changed the text under it — is stale and is
refused, never applied blindly. A created file is one hunk that fills an empty document.
"""

from __future__ import annotations

import difflib
import itertools
from dataclasses import dataclass, field
from typing import Literal

SEARCH_WINDOW = 200
HunkState = Literal["pending", "accepted", "rejected"]
EMPTY_DOCUMENTS = ("", "\n", "\r\n")
"""What an editor holds for a file that does not exist yet (Neovim and Helix: one empty line)."""

_ids = itertools.count(1)


@dataclass
class Hunk:
    id: str
    start: int
    """Line (0-based) in the original text where the old lines begin."""
    old_lines: list[str]
    new_lines: list[str]
    new_start: int = 0
    """Line (0-based) in the agent's text where the new lines begin."""
    note: str = ""
    """What the agent said this change does, when it said so."""
    state: HunkState = "pending"

    @property
    def delta(self) -> int:
        return len(self.new_lines) - len(self.old_lines)

    @property
    def first_change(self) -> str:
        """The first non-blank line this hunk writes (or, for a removal, removes)."""
        for line in [*self.new_lines, *self.old_lines]:
            if line.strip():
                return line.strip()
        return ""


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

    @property
    def created(self) -> bool:
        return self.old_text is None

    @property
    def deleted(self) -> bool:
        return self.new_text is None


@dataclass
class Proposal:
    id: str
    files: dict[str, FileChange]
    """By document URI."""
    rationale: str = ""
    partial: bool = False
    """The run was cancelled: these are the edits it had made by then."""

    @property
    def pending(self) -> bool:
        return any(f.pending for f in self.files.values())


@dataclass(frozen=True)
class EditNote:
    """What the agent said just before one of its file edits, and the text that edit wrote."""

    path: str
    """Absolute path on disk."""
    wrote: str
    removed: str
    reason: str


def split_lines(text: str | None) -> list[str]:
    return (text or "").splitlines(keepends=True)


def make_hunks(old: str | None, new: str | None) -> list[Hunk]:
    old_lines, new_lines = split_lines(old), split_lines(new)
    if old is None or new is None:  # a whole file appears or goes: one hunk, even if empty
        return [Hunk(f"h{next(_ids)}", 0, old_lines, new_lines, 0)]
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    return [
        Hunk(f"h{next(_ids)}", i1, old_lines[i1:i2], new_lines[j1:j2], j1)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def make_proposal(
    proposal_id: str, changes: dict[str, tuple[str, str | None, str | None]]
) -> Proposal:
    """`changes`: uri -> (absolute path, old text, new text)."""
    files = {
        uri: FileChange(path, uri, old, new, make_hunks(old, new))
        for uri, (path, old, new) in changes.items()
    }
    return Proposal(proposal_id, files)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _overlap(ours: list[str], theirs: str) -> bool:
    """Whether some line of a hunk holds some line an edit wrote (an edit may replace
    part of a line only), or the other way round."""
    return any(a in b or b in a for a in ours for b in _lines(theirs))


def attach_notes(proposal: Proposal, notes: list[EditNote]) -> None:
    """Give each hunk the reason of the last edit that wrote (or removed) its lines."""
    for change in proposal.files.values():
        mine = [n for n in notes if n.path == change.path and n.reason]
        for hunk in change.hunks:
            written, removed = _lines("".join(hunk.new_lines)), _lines("".join(hunk.old_lines))
            for note in reversed(mine):
                if _overlap(written, note.wrote) or (
                    not written and _overlap(removed, note.removed)
                ):
                    hunk.note = note.reason
                    break


def locate(change: FileChange, hunk: Hunk, current: list[str]) -> int | None:
    """Where `hunk`'s old lines are in the current document, or None (stale)."""
    if change.created:  # it fills an empty document, and nothing else
        return 0 if "".join(current) in EMPTY_DOCUMENTS else None
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
