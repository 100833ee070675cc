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

    def feed(self, event: Event) -> list[Event]:
        if isinstance(event, MessageChunk | ThoughtChunk):
            stream = self._streams.setdefault(type(event), StreamRedactor())
            text = stream.feed(event.text)
            return [type(event)(text)] if text else []
        return [*self.flush(), event]

    def flush(self) -> list[Event]:
        """The text held back, at the end of the stream (or before any other event)."""
        out: list[Event] = []
        for kind, stream in self._streams.items():
            if text := stream.flush():
                out.append(kind(text))
        return out
