"""What the user did to the agent's changes in review, as a short note the model reads.

Both faces report the same way: the ACP face compares what the agent wrote through the
editor with what the editor holds now (`review_findings`); the LSP face reports the hunks
of a proposal the user rejected or let go stale. Either way the model is told where, what
it wrote and what the text is now, so it never works from a stale belief about a file.
The note is bounded (a few regions, a few lines each) and carries no secret.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from deepacp.secrets import redact

FindingKind = Literal["rejected", "changed", "stale", "gone"]
MAX_FINDINGS = 12
MAX_REGION_LINES = 20
MAX_NOTE_CHARS = 6_000
NOTE_HEADER = (
    "[review] The user reviewed your changes in the editor, and some files are not as you "
    "left them. Build on the text as it is now (shown below, or read the file again), not "
    "on what you wrote; do not redo a rejected change unless the user asks for it."
)
WHAT = {
    "rejected": "the user rejected your change",
    "changed": "the user changed this text",
    "stale": "your proposed change was not applied: the user changed the text under it",
    "gone": "the file no longer exists (the user rejected it or removed it)",
}


@dataclass(frozen=True)
class ReviewFinding:
    """One region of a file that is not what the agent wrote (or proposed)."""

    path: str
    """As the model names the file (workspace-relative where it can be)."""
    kind: FindingKind
    line: int = 0
    """Where the region starts in the file now (0-based)."""
    wrote: tuple[str, ...] = ()
    """The lines the agent wrote (or proposed) there."""
    now: tuple[str, ...] = ()
    """The lines the file has there now."""


def split_lines(text: str | None) -> list[str]:
    return (text or "").splitlines(keepends=True)


def _boundary(opcodes: Sequence[tuple[str, int, int, int, int]], at: int, start: bool) -> int:
    """Where a line boundary of the first text falls in the second: inside a changed block,
    a start widens to the block's start and an end to its end."""
    chosen = 0
    for tag, a1, a2, b1, b2 in opcodes:
        if not a1 <= at <= a2:
            continue
        if tag == "equal":
            chosen = b1 + (at - a1)
        elif start:
            chosen = b2 if at == a2 and a1 < a2 else b1
        else:
            chosen = b2 if at > a1 or a1 == a2 else b1
        if start:
            return chosen
    return chosen


def review_findings(
    path: str, before: str | None, written: str, current: str | None
) -> list[ReviewFinding]:
    """The regions where `current` (the file now) differs from `written` (what the agent
    wrote over `before`, None for a file it created). A region put back to what `before`
    had there is a rejection; anything else is the user's own change."""
    if current is None:
        return [ReviewFinding(path, "gone")]
    if current == written:
        return []
    wrote, now, was = split_lines(written), split_lines(current), split_lines(before)
    undone = difflib.SequenceMatcher(None, wrote, was, autojunk=False).get_opcodes()
    findings = []
    matcher = difflib.SequenceMatcher(None, wrote, now, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        o1, o2 = _boundary(undone, i1, True), _boundary(undone, i2, False)
        rejected = before is not None and now[j1:j2] == was[o1:o2]
        kind: FindingKind = "rejected" if rejected else "changed"
        findings.append(ReviewFinding(path, kind, j1, tuple(wrote[i1:i2]), tuple(now[j1:j2])))
    return findings


def _block(lines: Sequence[str]) -> str:
    shown = "".join(lines[:MAX_REGION_LINES])
    if shown and not shown.endswith("\n"):
        shown += "\n"
    more = len(lines) - MAX_REGION_LINES
    tail = f"(… {more} more lines; read the file to see them)\n" if more > 0 else ""
    return f"```\n{shown}{tail}```"


def _where(finding: ReviewFinding) -> str:
    if finding.kind == "gone":
        return finding.path
    if not finding.now:
        return f"{finding.path}, after line {finding.line}"
    first, last = finding.line + 1, finding.line + len(finding.now)
    return (
        f"{finding.path}, line {first}"
        if first == last
        else f"{finding.path}, lines {first}-{last}"
    )


def _entry(finding: ReviewFinding) -> str:
    parts = [f"- {_where(finding)}: {WHAT[finding.kind]}."]
    if finding.kind != "gone":
        parts.append(
            f"  You wrote:\n{_block(finding.wrote)}"
            if finding.wrote
            else "  You wrote nothing here."
        )
        parts.append(
            f"  It is now:\n{_block(finding.now)}" if finding.now else "  It is now empty here."
        )
    return "\n".join(parts)


def review_note(findings: Sequence[ReviewFinding]) -> str | None:
    """The note for the model (None when there is nothing to tell), bounded and redacted."""
    if not findings:
        return None
    entries: list[str] = []
    size = len(NOTE_HEADER)
    for finding in findings[:MAX_FINDINGS]:
        entry = _entry(finding)
        if entries and size + len(entry) > MAX_NOTE_CHARS:
            break
        entries.append(entry)
        size += len(entry) + 1
    left = len(findings) - len(entries)
    if left:
        entries.append(f"- … and {left} more changed regions: read those files again.")
    return redact("\n".join([NOTE_HEADER, *entries]))
