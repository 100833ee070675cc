"""ReviewPart: what the user did in review to the agent's changes (accepted, rejected,
edited: a face's `ReviewSource`) reaches the model as a note before its next call."""

from __future__ import annotations

from typing import Any

from deepacp.session.assembly import Contributions
from deepacp.session.parts.base import Part
from deepacp.session.workspace import ReviewSource


class ReviewPart(Part):
    def __init__(self, review: ReviewSource | None) -> None:
        self.review = review

    async def contribute(self, parts: Contributions) -> None:
        if self.review is not None:
            parts.inbox.append(self._note)

    async def _note(self) -> list[Any]:
        from deepacp.harness import review_message

        note = await self.review.note() if self.review is not None else None
        return [review_message(note)] if note else []

    async def cleared(self) -> None:
        if self.review is not None:
            self.review.forget_all()  # a fresh conversation knows of no earlier change
