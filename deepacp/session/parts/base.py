"""The seam of the session layer: `Part`, one feature of a session, and what its hooks
are told."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from deepacp.events import Command, Event, StopReason
from deepacp.session.modes import Mode

if TYPE_CHECKING:
    from deepacp.session.assembly import Contributions
    from deepacp.session.context import SessionContext
    from deepacp.session.store import SessionRecord

CommandHandler = Callable[[str], Awaitable[str]]
"""A slash command: its argument text in, the text the user sees out."""


TITLE_CHARS = 60


def title_from(text: str) -> str:
    """A prompt's title: its first line, cut to fit a list."""
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first if len(first) <= TITLE_CHARS else first[: TITLE_CHARS - 1].rstrip() + "…"


@dataclass(frozen=True)
class PromptStart:
    """A user prompt about to run: its id, title and where the thread is."""

    message_id: str
    title: str
    thread_id: str
    checkpoint_id: str | None


@dataclass(frozen=True)
class EndedTurn:
    """A turn that ended: the prompts it ran (message ids, first to last) and why it stopped
    (None: it failed)."""

    message_ids: Sequence[str]
    stop: StopReason | None


class Part:
    """One feature of a session. Every hook does nothing unless a part overrides it."""

    ctx: SessionContext

    def bind(self, ctx: SessionContext) -> None:
        """Called once, when the session is made."""
        self.ctx = ctx

    def commands(self) -> Sequence[tuple[Command, CommandHandler]]:
        """The slash commands this part answers."""
        return ()

    async def opening(self) -> list[Event]:
        """What the user hears as the session opens (after the slash commands)."""
        return []

    async def contribute(self, parts: Contributions) -> None:
        """Add to the graph about to be built."""

    async def before_prompt(self, text: str, steered: bool) -> str | None:
        """Why the user's message (`steered`: into the running turn) may not run, once
        the user was told (None: it may)."""
        return None

    async def prompt_started(self, prompt: PromptStart) -> None:
        """A prompt begins running."""

    async def prompt_ended(self, prompt: PromptStart) -> None:
        """A prompt stopped running, however (shielded from cancel)."""

    async def turn_ended(self, turn: EndedTurn) -> None:
        """A turn ended (several prompts, when messages were steered into it)."""

    async def saved_history(self) -> list[Event] | None:
        """The conversation's events, saved earlier (None: read them the long way)."""
        return None

    async def history(self, events: list[Event]) -> list[Event]:
        """The conversation's events as read, with what this part adds to them."""
        return events

    def mode_changed(self, mode: Mode) -> None:
        """The user switched mode."""

    async def taken_back(self, message_ids: set[str]) -> None:
        """The turns of these prompts were taken back (rewind, undo)."""

    async def cleared(self) -> None:
        """The conversation was replaced by a fresh one."""

    async def forked(self, source: SessionRecord, fork: SessionRecord) -> None:
        """`fork` was made as a copy of this session."""

    async def closed(self) -> None:
        """The session ended."""
