"""TitlePart: a session is titled by its first prompt (`PromptStart.title`)."""

from __future__ import annotations

from deepacp.events import TitleChanged
from deepacp.session.parts.base import Part, PromptStart


class TitlePart(Part):
    async def prompt_started(self, prompt: PromptStart) -> None:
        if self.ctx.record.title is None:
            title = self.ctx.update(title=prompt.title or "Untitled").title
            await self.ctx.handler.emit(TitleChanged(title or ""))
