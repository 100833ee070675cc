"""ServerPart: what the model's server says about itself (`deepacp.server_facts`), and the
one warning the user gets when its chat template drops the tool definitions: the model then
answers in prose and can neither edit files nor run commands, whatever it is asked.

The server is asked as the session opens (or its first prompt starts, in faces that announce
nothing), off the event loop; nothing waits for the answer, and the warning is sent when it
comes, once per model.
"""

from __future__ import annotations

import asyncio

from deepacp.events import Event, Notice
from deepacp.server_facts import afacts_for, tools_dropped_line
from deepacp.session.parts.base import Part, PromptStart


class ServerPart(Part):
    def __init__(self, here: bool) -> None:
        """`here`: the model is called from this process (not by a LangGraph server)."""
        self.here = here
        self._asking: dict[str, asyncio.Task[None]] = {}

    def _ask(self) -> None:
        spec = self.ctx.record.model or ""
        if self.here and spec and spec not in self._asking:
            self._asking[spec] = asyncio.create_task(self._warn(spec))

    async def _warn(self, spec: str) -> None:
        facts = await afacts_for(spec)
        if facts is not None and facts.tools_supported is False:
            await self.ctx.handler.emit(Notice(tools_dropped_line(facts)))

    async def opening(self) -> list[Event]:
        self._ask()
        return []

    async def prompt_started(self, prompt: PromptStart) -> None:
        self._ask()  # a model chosen since, or a face that announces nothing

    async def closed(self) -> None:
        for task in self._asking.values():
            task.cancel()
        await asyncio.gather(*self._asking.values(), return_exceptions=True)
