"""Secrets out of a turn's live events: the model's text and thoughts stream in pieces
before the harness redacts the finished message, so a key the model repeats would reach
the editor whole. Every face gets its events through here (the session runtime's emit)."""

from __future__ import annotations

from dataclasses import dataclass, field

from deepacp.events import Event, MessageChunk, ThoughtChunk
from deepacp.secrets import StreamRedactor


@dataclass
class LiveRedactor:
    """Redacts streamed message and thought text; other events pass as they are, after
    what is held back of the text before them."""

    _streams: dict[type, StreamRedactor] = field(default_factory=dict)
    _ids: dict[type, str | None] = field(default_factory=dict)
    """The message each stream's held-back text belongs to."""

    def feed(self, event: Event) -> list[Event]:
        if isinstance(event, MessageChunk | ThoughtChunk):
            kind = type(event)
            out = (
                self._flush(kind)
                if self._ids.get(kind, event.message_id) != event.message_id
                else []
            )
            self._ids[kind] = event.message_id
            text = self._streams.setdefault(kind, StreamRedactor()).feed(event.text)
            return [*out, kind(text, event.message_id)] if text else out
        return [*self.flush(), event]

    def _flush(self, kind: type[MessageChunk | ThoughtChunk]) -> list[Event]:
        stream = self._streams.get(kind)
        text = stream.flush() if stream is not None else ""
        return [kind(text, self._ids.get(kind))] if text else []

    def flush(self) -> list[Event]:
        """The text held back, at the end of the stream (or before any other event)."""
        return [event for kind in list(self._streams) for event in self._flush(kind)]
