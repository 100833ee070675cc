"""Savers that keep the latest message history of each thread in memory.

A thread's messages are stored as per-step deltas (`harness/state.py`), so LangGraph
rebuilds the whole history from every stored write each time it loads a checkpoint: at
the start of each turn and each resume, a cost that grows with the thread. A checkpoint's
history never changes once it is written (LangGraph adds writes only to a checkpoint with
no child yet, and a fork snapshots its value instead), so the history rebuilt at one
checkpoint is kept, and the next load rebuilds only the steps after it: the stored writes
of the checkpoints between the two, read from the saver as a load would read them. Only a
checkpoint this process wrote on a path from the kept one is rebuilt that way; any other
(another process's, a rewind's older one, a sub-agent's namespace) is read whole, as
before, and kept in its turn.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver, DeltaChannelHistory

from deepacp.harness import MESSAGES, MESSAGES_CHANNEL

MAX_THREADS = 8
"""Threads whose history is kept (the most recently loaded)."""
MAX_LINKS = 20_000
"""Checkpoints written since a thread's history was kept that are remembered (past it,
the next load reads the thread whole)."""


@dataclass
class _Kept:
    checkpoint_id: str
    messages: list[Any]
    parents: dict[str, str | None] = field(default_factory=dict)
    """Each checkpoint this process wrote on the thread: its parent."""


def _ids(config: Mapping[str, Any]) -> tuple[str, str, str | None]:
    conf = config.get("configurable", {})
    return str(conf.get("thread_id")), conf.get("checkpoint_ns", ""), conf.get("checkpoint_id")


def rebuilt(history: DeltaChannelHistory) -> list[Any]:
    """The messages a stored history gives: as a load replays it, the same channel."""
    channel = MESSAGES_CHANNEL.from_checkpoint(history.get("seed"))
    channel.replay_writes(history["writes"])
    return list(channel.get())


class HistoryCache:
    """Mixin for a LangGraph saver (first in the bases): loads of a thread's messages
    reuse the history rebuilt at its last load. Top-level graphs only (namespace "")."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._kept: OrderedDict[str, _Kept] = OrderedDict()

    def _saver(self) -> BaseCheckpointSaver:
        return super()  # type: ignore[return-value]  # the saver this mixes into

    async def aget_delta_channel_history(
        self, *, config: Any, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        thread_id, ns, target = _ids(config)
        if MESSAGES not in channels or ns or target is None:
            return await self._saver().aget_delta_channel_history(config=config, channels=channels)
        others = [c for c in channels if c != MESSAGES]
        result = dict(
            await self._saver().aget_delta_channel_history(config=config, channels=others)
            if others
            else {}
        )
        messages = await self._since_kept(thread_id, target)
        if messages is None:
            whole = await self._saver().aget_delta_channel_history(
                config=config, channels=[MESSAGES]
            )
            messages = rebuilt(whole[MESSAGES])
        self._keep(thread_id, target, messages)
        result[MESSAGES] = {"seed": list(messages), "writes": []}
        return result

    async def _since_kept(self, thread_id: str, target: str) -> list[Any] | None:
        """The messages at `target`, rebuilt from the kept history; None when `target` is
        not a checkpoint written here after it."""
        kept = self._kept.get(thread_id)
        if kept is None:
            return None
        if kept.checkpoint_id == target:
            return kept.messages
        path: list[str] = []  # target's parent first, back to the kept checkpoint
        at = kept.parents.get(target)
        while at is not None and at != kept.checkpoint_id and len(path) < MAX_LINKS:
            path.append(at)
            at = kept.parents.get(at)
        if at is None or at != kept.checkpoint_id:
            return None
        path.append(at)
        seed: Any = kept.messages
        steps: list[list[Any]] = []
        for i, checkpoint_id in enumerate(path):
            saved = await self._saver().aget_tuple(
                {
                    "configurable": {
                        "thread_id": thread_id,
                        "checkpoint_ns": "",
                        "checkpoint_id": checkpoint_id,
                    }
                }
            )
            if saved is None:
                return None
            parent = saved.parent_config and _ids(saved.parent_config)[2]
            if i + 1 < len(path) and parent != path[i + 1]:
                return None  # stored otherwise than written here
            steps.append([w for w in saved.pending_writes or () if w[1] == MESSAGES])
            if checkpoint_id == kept.checkpoint_id:
                break
            stored = saved.checkpoint["channel_values"].get(MESSAGES)
            if stored is not None:  # a snapshot: the history there, whatever came before
                seed = stored
                break
        writes = [w for step in reversed(steps) for w in step]
        return rebuilt({"seed": seed, "writes": writes})

    def _keep(self, thread_id: str, checkpoint_id: str, messages: list[Any]) -> None:
        kept = self._kept.pop(thread_id, None)
        parents = kept.parents if kept is not None else {}
        self._kept[thread_id] = _Kept(checkpoint_id, messages, parents)
        while len(self._kept) > MAX_THREADS:
            self._kept.popitem(last=False)

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        saved = await self._saver().aput(config, checkpoint, metadata, new_versions)
        thread_id, ns, parent = _ids(config)
        kept = self._kept.get(thread_id)
        if kept is not None and not ns:
            if len(kept.parents) >= MAX_LINKS:
                kept.parents.clear()
            kept.parents[checkpoint["id"]] = parent
        return saved

    def forget(self, thread_id: str) -> None:
        """Drop what is kept of a thread (its checkpoints are gone or rewritten)."""
        self._kept.pop(str(thread_id), None)

    async def adelete_thread(self, thread_id: str) -> None:
        self.forget(thread_id)
        await self._saver().adelete_thread(thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        for thread_id in thread_ids:
            self.forget(thread_id)
        await self._saver().aprune(thread_ids, strategy=strategy)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._kept.clear()
        await self._saver().adelete_for_runs(run_ids)


Saver = TypeVar("Saver", bound=BaseCheckpointSaver)


@functools.cache
def with_history_cache(saver: type[Saver]) -> type[Saver]:
    """`saver`'s class with `HistoryCache` mixed in."""
    return type(saver.__name__, (HistoryCache, saver), {"__doc__": HistoryCache.__doc__})
