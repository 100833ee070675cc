"""LocalHost: the thread in this process — its graph built here (`assembly.py`), its
checkpoints in the session's store (SQLite, PostgreSQL, or memory for an LSP edit)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from deepacp.config import Effort, load_config

if TYPE_CHECKING:
    from deepacp.events import Compaction
    from deepacp.session.assembly import Contributions
    from deepacp.session.hosts import HostedSession
    from deepacp.session.storage.records import Records, SessionRecord


class ModelFactory(Protocol):
    """Turns a model spec into a chat model reasoning at `effort`
    (`deepacp.models.resolve_model`), or raises a `ModelConfigError` saying what is missing."""

    def __call__(self, spec: str, /, effort: Effort | None = None) -> Any: ...


Ready = Callable[[], Awaitable[None]]
"""Waits until the harness can be imported without racing another import of it."""
Facts = Callable[[str], Any]
"""What the server of a model spec says about itself (`deepacp.harness.ServerFacts`, None:
not known); called in a thread, before a graph is built, to choose the profile."""


async def no_wait() -> None:
    return None


def asked_facts(spec: str) -> Any:
    """What the model's server said when asked (`deepacp.server_facts`: once a process, and
    only a server the user points at, never a hosted API)."""
    from deepacp.server_facts import facts_for

    return facts_for(spec)


class LocalHost:
    def __init__(
        self,
        records: Records,
        model_factory: ModelFactory,
        harness_ready: Ready = no_wait,
        planning: bool = True,
        server_facts: Facts = asked_facts,
    ) -> None:
        self.records = records
        self.server_facts = server_facts
        self.model_factory = model_factory
        self.harness_ready = harness_ready
        self.planning = planning
        self.window: int | None = None
        self._model: Any = None
        self._model_of: tuple[str, str | None] | None = None
        self._summarizer: Any = None

    async def make_thread(self, record: SessionRecord) -> None:
        return None  # made with its first checkpoint

    async def ready(self) -> None:
        await self.harness_ready()

    async def graph(self, ctx: HostedSession, parts: Contributions) -> Any:
        await self.harness_ready()
        from deepacp.harness import SummarizationMiddleware, choose_profile
        from deepacp.session.assembly import assemble

        record = ctx.record
        wanted = (record.model or "", record.effort)
        if self._model is None or self._model_of != wanted:  # off the loop: cancel is heard
            self._model = await asyncio.to_thread(
                self.model_factory,
                wanted[0],
                effort=record.effort,  # type: ignore[arg-type]
            )
            self._model_of = wanted
        self.window = (getattr(self._model, "profile", None) or {}).get("max_input_tokens")
        self._summarizer = SummarizationMiddleware(ctx.backend, before_compact=parts.before_compact)
        facts = await asyncio.to_thread(self.server_facts, wanted[0])
        return await asyncio.to_thread(  # a quarter second of CPU, or more
            assemble,
            self._model,
            ctx.backend,
            ctx.policy,
            await self.records.checkpointer(),
            parts,
            planning=self.planning,
            profile=choose_profile(wanted[0], parts.profile, facts),
            retry=load_config().retry,
            summarizer=self._summarizer,
        )

    def forget_model(self) -> None:
        self._model = self._model_of = None

    def check_model(self, spec: str) -> None:
        self.model_factory(spec)

    async def messages(self, config: dict[str, Any]) -> list[Any]:
        await self.harness_ready()
        from deepacp.harness import read_messages

        return await read_messages(await self.records.checkpointer(), config)

    async def value(self, config: dict[str, Any], key: str) -> Any:
        await self.harness_ready()
        from deepacp.harness import read_value

        return await read_value(await self.records.checkpointer(), config, key)

    async def delete_thread(self, thread_id: str) -> None:
        await (await self.records.checkpointer()).adelete_thread(thread_id)

    async def compact(
        self, graph: Any, config: dict[str, Any], report: Callable[[Compaction], Awaitable[None]]
    ) -> bool:
        return bool(await self._summarizer.compact(graph, config, self._model, report))

    def here(self, done: str) -> None:
        return None

    async def close(self) -> None:
        self._model = self._model_of = self._summarizer = None
