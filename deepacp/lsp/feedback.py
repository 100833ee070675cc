"""What the user did with the earlier proposals, for the agent's next run in that workspace:
the hunks rejected or gone stale, told once each, the same way the ACP face tells it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from deepacp.feedback import FindingKind, ReviewFinding, review_note, split_lines
from deepacp.lsp.proposal import FileChange, Hunk, Proposal

CurrentText = Callable[[FileChange], str | None]
"""A proposed file as it is now (the editor's text, else the disk's; None: no such file)."""


def _finding(change: FileChange, hunk: Hunk, lines: list[str], shown: str) -> ReviewFinding:
    at = change.locate(hunk, lines)
    if hunk.state == "rejected" and change.created and not lines:
        return ReviewFinding(shown, "gone")
    kind: FindingKind = "rejected" if hunk.state == "rejected" else "stale"
    if change.created:  # what the user typed into it instead
        start, end = 0, len(lines)
    elif at is not None:
        start, end = at, at + len(hunk.old_lines)
    else:  # the lines the user's edits made of the hunk's
        start, end = change.span(hunk, lines)
    return ReviewFinding(shown, kind, start, tuple(hunk.new_lines), tuple(lines[start:end]))


def proposal_findings(
    proposal: Proposal, root: Path, current: CurrentText, shown: Callable[[str], str]
) -> list[ReviewFinding]:
    """The rejected and stale hunks of `proposal` under `root` not told yet (now told)."""
    found = []
    for change in proposal.files.values():
        if not Path(change.path).resolve().is_relative_to(root.resolve()):
            continue
        text = current(change)
        stale = {p.hunk.id for p in change.placed(text) if p.stale}
        lines = split_lines(text)
        for hunk in change.hunks:
            if hunk.told or not (hunk.state == "rejected" or hunk.id in stale):
                continue
            hunk.told = True
            found.append(_finding(change, hunk, lines, shown(change.path)))
    return found


class PendingNote:
    """A note to hand the agent once, at its first model call."""

    def __init__(self, text: str | None) -> None:
        self.text = text

    async def note(self) -> str | None:
        text, self.text = self.text, None
        return text

    def forget_all(self) -> None:
        self.text = None


def review_since(
    proposals: list[Proposal], root: Path, current: CurrentText, shown: Callable[[str], str]
) -> PendingNote:
    """What the next run in `root` should hear about the earlier `proposals`."""
    findings = [f for p in proposals for f in proposal_findings(p, root, current, shown)]
    return PendingNote(review_note(findings))
