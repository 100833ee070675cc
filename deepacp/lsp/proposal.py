"""A proposal: the agent's changes as hunks the user accepts or rejects one by one.

Hunks are computed against the text the agent started from (the editor's buffer, unsaved
changes included). Each hunk's lines are followed through every change made to the
document since (`tracking.py`), so it is known where they are *now*. A hunk whose old lines
are no longer there — the user changed the text under it — is stale, placed where its
lines went, and is refused, never applied blindly. A pure insertion is anchored on the
line before it. A created file is one hunk that fills an empty document.

A hunk is pending until the user accepts or rejects it, and a decision is final: accepting
a hunk already rejected (a stale code action, a late bookkeeping command) changes nothing.
Accepting goes through the editor, so it has a state of its own: an accept *claims* its
pending hunks (pending -> applying) before it sends their edit, and a second accept of the
same hunks finds nothing to send; once the editor's text shows the edit the hunks are
accepted, and if it does not (the editor refused, failed, or answered without applying)
they are pending again.
"""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from deepacp.lsp.tracking import Span, Spans

Decision = Literal["accepted", "rejected"]
HunkState = Literal["pending", "applying", Decision]
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
    told: bool = False
    """The agent has been told that the user rejected it (or let it go stale)."""

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

    def decide(self, decision: Decision) -> bool:
        """Accept or reject this hunk if it is still pending; whether it was."""
        if self.state != "pending":
            return False
        self.state = decision
        return True

    def claim(self) -> bool:
        """Take this pending hunk for an edit about to be sent; whether it was pending."""
        if self.state != "pending":
            return False
        self.state = "applying"
        return True

    def settle(self, applied: bool) -> bool:
        """The editor's text shows this hunk applied (accepted) or not (pending again);
        whether it was being applied."""
        if self.state != "applying":
            return False
        self.state = "accepted" if applied else "pending"
        return True


@dataclass(frozen=True)
class Placed:
    """A pending hunk and where it is in the document now."""

    hunk: Hunk
    line: int
    """Where its old lines are; for a stale hunk, where what replaced them is."""
    stale: bool
    row: int
    """The line its hint and actions are on: `line`, but the last line for an insertion
    at the end of the document (no editor shows a line past the last)."""


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
    tracked: Spans = field(init=False, repr=False)
    """Where each hunk's old lines are in the text last seen."""

    def __post_init__(self) -> None:
        spans = {h.id: (h.start, h.start + len(h.old_lines)) for h in self.hunks}
        self.tracked = Spans(split_lines(self.old_text), spans)

    @property
    def pending(self) -> list[Hunk]:
        return [h for h in self.hunks if h.state == "pending"]

    @property
    def open(self) -> list[Hunk]:
        """The hunks not decided yet: pending, or being applied."""
        return [h for h in self.hunks if h.state in ("pending", "applying")]

    def claim(self, hunk_ids: Iterable[str]) -> list[str]:
        """Claim the named pending hunks for an edit; the ids claimed now (a hunk already
        being applied or decided is left out)."""
        chosen = set(hunk_ids)
        return [h.id for h in self.hunks if h.id in chosen and h.claim()]

    def settle(self, hunk_ids: Iterable[str], applied: bool) -> list[str]:
        """The named hunks being applied are accepted (or pending again); those settled."""
        chosen = set(hunk_ids)
        return [h.id for h in self.hunks if h.id in chosen and h.settle(applied)]

    @property
    def created(self) -> bool:
        return self.old_text is None

    @property
    def deleted(self) -> bool:
        return self.new_text is None

    def decide(self, decision: Decision, hunk_ids: Iterable[str] | None = None) -> list[str]:
        """Decide the named pending hunks (all of them when `hunk_ids` is None); the ids
        of those decided now."""
        chosen = None if hunk_ids is None else set(hunk_ids)
        return [
            h.id for h in self.hunks if (chosen is None or h.id in chosen) and h.decide(decision)
        ]

    def span(self, hunk: Hunk, current: list[str]) -> Span:
        """The lines of `current` (the document now) that `hunk`'s old lines became."""
        self.tracked.follow(current)
        return self.tracked[hunk.id]

    def locate(self, hunk: Hunk, current: list[str]) -> int | None:
        """Where `hunk`'s old lines are in the current document, or None (stale)."""
        if self.created:  # it fills an empty document, and nothing else
            return 0 if "".join(current) in EMPTY_DOCUMENTS else None
        start, end = self.span(hunk, current)
        if not hunk.old_lines:
            anchor = self._anchor(hunk)
            if anchor is None or (0 < start <= len(current) and current[start - 1] == anchor):
                return start
            return None
        # Where the difference was ambiguous (a line typed beside an equal one), the span
        # is wider than the hunk: its old lines may be anywhere in it.
        size = len(hunk.old_lines)
        for at in range(start, max(start, end - size) + 1):
            if current[at : at + size] == hunk.old_lines:
                return at
        return None

    def shows(self, hunk: Hunk, current: list[str]) -> bool:
        """Whether `current` looks like it holds `hunk` applied: its old lines gone from
        where they were, or (an insertion) its new lines right after its anchor. A guess,
        for when the text before and after the edit are not known."""
        if self.created:
            return "".join(current) == (self.new_text or "")
        at = self.locate(hunk, current)
        if hunk.old_lines:
            return at is None
        return at is not None and current[at : at + len(hunk.new_lines)] == hunk.new_lines

    def placed(self, current: str | None, hunks: list[Hunk] | None = None) -> list[Placed]:
        """The pending hunks (or `hunks`), each where it is in `current` (the document now)
        or stale."""
        lines = split_lines(current)
        last = max(0, len(lines) - 1)
        out = []
        for hunk in self.pending if hunks is None else hunks:
            at = self.locate(hunk, lines)
            if at is None:
                at = min(self.span(hunk, lines)[0], last)
                out.append(Placed(hunk, at, stale=True, row=at))
            else:
                out.append(Placed(hunk, at, stale=False, row=min(at, last)))
        return out

    def _anchor(self, hunk: Hunk) -> str | None:
        """The original line just before a pure insertion; None at the top of the file."""
        original = split_lines(self.old_text)
        return original[hunk.start - 1] if 0 < hunk.start <= len(original) else None


@dataclass
class Proposal:
    id: str
    files: dict[str, FileChange]
    """By document URI."""
    rationale: str = ""
    partial: bool = False
    """The run was cancelled: these are the edits it had made by then."""
    instruction: str = ""
    """What the user asked for."""

    @property
    def pending(self) -> bool:
        return any(f.pending for f in self.files.values())

    @property
    def open(self) -> bool:
        """Some hunk is not decided yet (pending, or being applied)."""
        return any(f.open for f in self.files.values())

    @property
    def label(self) -> str:
        """The proposal in a few words, to tell it from another: what the user asked for."""
        asked = self.instruction.strip().splitlines()
        return f"{self.id}: {asked[0][:60]}" if asked else self.id

    @property
    def hunk_count(self) -> int:
        return sum(len(f.hunks) for f in self.files.values())

    @property
    def summary(self) -> str:
        """The first line of what the agent said it did."""
        first = self.rationale.strip().splitlines()
        return first[0][:200] if first else "a change proposed by deepacp"

    def accept(self, hunks: Mapping[str, Iterable[str]]) -> int:
        """Accept pending hunks by file (uri -> hunk ids); how many were accepted now."""
        return self._decide("accepted", hunks)

    def reject(self, hunks: Mapping[str, Iterable[str] | None]) -> int:
        """Reject pending hunks by file (uri -> hunk ids, None: all of that file's); how
        many were rejected now."""
        return self._decide("rejected", hunks)

    def reject_all(self) -> int:
        """Reject everything still pending; how many hunks that was."""
        return self.reject(dict.fromkeys(self.files))

    def _decide(self, decision: Decision, hunks: Mapping[str, Iterable[str] | None]) -> int:
        changes = [(self.files[uri], ids) for uri, ids in hunks.items() if uri in self.files]
        return sum(len(change.decide(decision, ids)) for change, ids in changes)


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
