"""The agent's writes through the editor, checked against what the editor holds now.

A write through `fs/write_text_file` puts the change up for the editor's review, where the
user may accept, reject or edit each hunk. `EditorReview` remembers what the agent wrote
(and what was there before) and, when asked, reads each file back to find what the user
did since — the `note()` the session gives the model before its next call.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from deepacp.backends.editor_client import EditorClient
from deepacp.feedback import ReviewFinding, review_findings, review_note

MAX_TRACKED = 50
"""Files followed at once (the most recently written): each is read back before every call."""


@dataclass
class Written:
    shown: str
    """The path as the model names it."""
    before: str | None
    """The text before the agent's first write (None: the agent created the file)."""
    text: str
    """What the model last knew the file to hold: what it wrote, or what it was told."""


class EditorReview:
    """What the agent wrote through the editor, by absolute path."""

    def __init__(self, editor: EditorClient) -> None:
        self.editor = editor
        self._files: OrderedDict[str, Written] = OrderedDict()

    def tracks(self, target: str) -> bool:
        return target in self._files

    def wrote(self, target: str, shown: str, before: str | None, text: str) -> None:
        """Record a write (the text before the agent's first write of a file is kept)."""
        earlier = self._files.pop(target, None)
        self._files[target] = Written(shown, earlier.before if earlier else before, text)
        while len(self._files) > MAX_TRACKED:
            self._files.popitem(last=False)

    def forget(self, target: str) -> None:
        """The agent deleted the file itself: nothing left to compare."""
        self._files.pop(target, None)

    def forget_all(self) -> None:
        self._files.clear()

    async def _current(self, target: str) -> str | None:
        """The file as the editor has it now (None: gone). Raises when the editor cannot
        say for a file that is still on disk."""
        path = Path(target)
        if self.editor.can_read:
            try:
                return await self.editor.read_text_file(target)
            except Exception:  # an error answer (EditorError), or the connection went
                if path.exists():
                    raise
                return None
        return path.read_text(encoding="utf-8") if path.is_file() else None

    async def findings(self) -> list[ReviewFinding]:
        """What differs from what the model knows, file by file; each finding is reported
        once (the model knows the file as it is now afterwards)."""
        found: list[ReviewFinding] = []
        for target, written in list(self._files.items()):
            try:
                current = await self._current(target)
            except Exception:
                continue  # unknown for now: asked again before the next call
            regions = review_findings(written.shown, written.before, written.text, current)
            found += regions
            if current is None:
                self._files.pop(target, None)
            elif regions:
                written.text = current
        return found

    async def note(self) -> str | None:
        return review_note(await self.findings())
