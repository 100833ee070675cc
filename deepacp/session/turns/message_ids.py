"""Which message a streamed chunk belongs to, by the id the thread will keep for it.

LangChain gives a streamed chunk the provider's message id where the provider sends one
(OpenAI on every chunk, Anthropic on the first) and its run's `lc_run--…` id otherwise; the
finished message keeps the first provider id among its chunks, else the run id. Live chunks
are shown under that id, so `session/load` replays them under the same one.
"""

from __future__ import annotations

from typing import Any

RUN_PREFIXES = ("lc_", "run-")
"""LangChain's own ids (a run's), which a provider's id wins over."""


def _is_run_id(message_id: str) -> bool:
    return message_id.startswith(RUN_PREFIXES)


class StreamIds:
    """The id of the message being streamed, one model call at a time."""

    def __init__(self) -> None:
        self._call: Any = None
        self._id: str | None = None

    def of(self, chunk_id: str | None, meta: dict[str, Any]) -> str | None:
        """The id of the message a chunk (its own id, its stream metadata) belongs to."""
        call = meta.get("langgraph_checkpoint_ns")
        if call != self._call:  # another model step
            self._call, self._id = call, None
        if chunk_id and chunk_id != self._id and self._replaced_by(chunk_id):
            self._id = chunk_id
        return self._id

    def _replaced_by(self, chunk_id: str) -> bool:
        """Whether another id on a chunk names the message from now on: anything after a
        run's id (the provider's wins; a retried call has its own run), and a provider's
        id after a provider's (another reply); never a run's after a provider's."""
        return self._id is None or _is_run_id(self._id) or not _is_run_id(chunk_id)
