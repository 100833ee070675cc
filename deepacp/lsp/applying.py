"""Edits sent to the editor and not yet seen in its text: when an accept counts.

An editor's answer to `workspace/applyEdit` is not proof that it applied the edit: Neovim
drops an edit made for an older version of its buffer and still answers `applied: true`,
and Emacs 30's eglot (set to show a diff) answers the same having changed nothing. So the
hunks an accept claimed stay *applying* until the document's text, as the editor reports
it, shows the edit (they are accepted) or does not (they are pending again):

- a `didChange`/`didOpen` whose text is the edit's result settles it at once;
- after the answer, the next `didChange` of that document settles it either way, and so
  does a request about that document (editors send their changes before a request);
- an answer that it did not apply (or an error) settles it as not applied, unless the
  text already showed it;
- a document the editor does not share with the server (it never opened it) cannot be
  seen: there the answer is all there is.
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

from deepacp.lsp.proposal import FileChange, Proposal, split_lines


def digest(text: str) -> str:
    """A short fingerprint of a document's text, for a command to carry."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def shows(before: str, after: str, now: str) -> bool:
    """Whether `now` holds the edit that turns `before` into `after`: exactly when it is
    one of the two; when the user typed as well, whichever needs fewer lines changed to
    become `now` (the edit's own lines tip it), and not applied when that is a tie."""
    if now == after:
        return True
    if now == before:
        return False
    return _distance(after, now) < _distance(before, now)


def _distance(a: str, b: str) -> int:
    """How many lines differ between `a` and `b` (removed plus added)."""
    old, new = split_lines(a), split_lines(b)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    same = sum(block.size for block in matcher.get_matching_blocks())
    return len(old) + len(new) - 2 * same


@dataclass(eq=False)
class Application:
    """One file's edit, sent to the editor: the hunks it claimed and the document's text
    before and after it."""

    proposal: Proposal
    change: FileChange
    hunk_ids: list[str]
    before: str
    after: str | None
    """None: the edit deletes the file."""
    answered: bool = False
    why_not: str = ""
    """Why it was not applied, in words, once that is known."""
    outcome: asyncio.Future[bool] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    @property
    def uri(self) -> str:
        return self.change.uri

    def settle(self, applied: bool, why_not: str = "") -> None:
        """Accept the claimed hunks (or make them pending again), once."""
        if self.outcome.done():
            return
        self.change.settle(self.hunk_ids, applied)
        self.why_not = "" if applied else why_not
        self.outcome.set_result(applied)


class InFlight:
    """The applications sent and not settled yet."""

    def __init__(self) -> None:
        self._sent: list[Application] = []
        self._tasks: set[asyncio.Task] = set()

    def spawn(self, waiting: Coroutine[Any, Any, None]) -> None:
        """Run `waiting` (it waits for applications to settle) without losing it."""
        task = asyncio.ensure_future(waiting)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def add(self, application: Application) -> None:
        self._sent.append(application)

    def on(self, uri: str) -> list[Application]:
        return [a for a in self._sent if a.uri == uri and not a.outcome.done()]

    def text_seen(self, uri: str, text: str, reported: bool) -> None:
        """The editor's text of `uri` now. `reported`: it comes after the editor's answer
        to the edit (a `didChange` or a request about the document); otherwise only the
        edit's exact result settles it."""
        for application in self.on(uri):
            if application.after is None:
                continue
            if text == application.after:
                application.settle(True)
            elif reported and application.answered:
                application.settle(shows(application.before, application.after, text), UNSEEN)
        self._forget()

    def answered(
        self, application: Application, applied: bool, why_not: str, text: str | None
    ) -> None:
        """The editor answered the edit; `text` is its text of the document now (None: it
        does not share that document with the server)."""
        application.answered = True
        if not applied:
            application.settle(text is not None and text == application.after, why_not)
        elif text is None or application.after is None:
            application.settle(True)  # nothing to see: the editor's word is all there is
        elif text == application.after:
            application.settle(True)
        self._forget()

    def _forget(self) -> None:
        self._sent = [a for a in self._sent if not a.outcome.done()]


UNSEEN = "the editor answered that it applied it, but its text does not show it"
