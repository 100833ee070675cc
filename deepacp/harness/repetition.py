"""Noticing a model that repeats itself: the same n-gram of words, over and over.

Text is cut into tokens (a run of at most 24 word characters, or one other non-space
character), and every run of `NGRAM` consecutive tokens made of at least `DISTINCT`
different tokens is counted; when one run has been seen `REPEATS` times, the text is a
loop. A model caught in one (`[list_task: [list_task: …`, the same sentence again and
again) reaches that within a few hundred characters, while prose and code written out in a
reply practically never do. A stutter of one or two tokens (`word word word`) is left to
the output cap (`deepacp.output_cap`): filler like that is how tests and demos stream slowly.
Fed piece by piece as a stream arrives, at a cost linear in its length.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass

NGRAM = 8
REPEATS = 30
DISTINCT = 3
PHRASE_CHARS = 200
"""The repeated text is shown at most this long."""
TOKEN = re.compile(r"\w{1,24}|[^\w\s]")
WORD = re.compile(r"\w")


@dataclass(frozen=True)
class Repetition:
    """A loop found: the text before it, and the n-gram that repeats (as written first)."""

    before: str
    phrase: str


class RepetitionDetector:
    """Counts the n-grams of a text fed piece by piece (see the module docstring)."""

    def __init__(self, ngram: int = NGRAM, repeats: int = REPEATS) -> None:
        self.ngram = ngram
        self.repeats = repeats
        self.pieces: list[str] = []
        self.tail = ""
        """Text not cut into tokens yet (a word may go on in the next piece)."""
        self.offset = 0
        """Where `tail` starts in the whole text."""
        self.window: deque[str] = deque(maxlen=ngram)
        self.starts: deque[int] = deque(maxlen=ngram)
        """The tokens of the last n-gram, and where each starts in the whole text."""
        self.counts: dict[tuple[str, ...], int] = {}
        self.first: dict[tuple[str, ...], tuple[int, int]] = {}

    def feed(self, piece: str) -> Repetition | None:
        """The loop, once the text so far holds one; else None."""
        if not piece:
            return None
        self.pieces.append(piece)
        text = self.tail + piece
        done = 0
        for match in TOKEN.finditer(text):
            if match.end() == len(text) and WORD.match(match.group()):
                break  # the word may go on
            done = match.end()
            found = self._count(match.group(), self.offset + match.start(), self.offset + done)
            if found is not None:
                return found
        self.offset += done
        self.tail = text[done:]
        return None

    def _count(self, token: str, start: int, end: int) -> Repetition | None:
        self.window.append(token)
        self.starts.append(start)
        if len(self.window) < self.ngram:
            return None
        key = tuple(self.window)
        seen = self.counts.get(key, 0) + 1
        self.counts[key] = seen
        if seen == 1:
            self.first[key] = (self.starts[0], end)
        if seen < self.repeats or len(set(key)) < DISTINCT:
            return None
        whole = "".join(self.pieces)
        first_start, first_end = self.first[key]
        return Repetition(whole[:first_start], whole[first_start:first_end][:PHRASE_CHARS])


def repetition_in(text: str) -> Repetition | None:
    """The loop in a whole text, if it holds one."""
    return RepetitionDetector().feed(text + " ")
