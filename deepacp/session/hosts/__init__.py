"""Hosts: where a session's thread lives and its graph runs — in this process
(`local.LocalHost`, with an ephemeral store for an LSP edit) or on a LangGraph server
(`langgraph.ServerHost`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from deepacp.backends.protocol import Backend
    from deepacp.events import Compaction
    from deepacp.session.assembly import Contributions
    from deepacp.session.storage.records import SessionRecord
    from deepacp.session.turns.approvals import ApprovalPolicy


class HostedSession(Protocol):
    """What a host reads of the session whose graph it builds (the session's
    `SessionContext`, which holds the host: declared here so hosts do not import it)."""

    @property
    def record(self) -> SessionRecord: ...

    @property
    def backend(self) -> Backend: ...

    @property
    def policy(self) -> ApprovalPolicy: ...


class Host(Protocol):
    window: int | None
    """The model's context window, as its profile says (None: not known)."""

    async def make_thread(self, record: SessionRecord) -> None:
        """Make the session's thread where it lives (a `ServerUnavailable` when it cannot)."""
        ...

    async def ready(self) -> None:
        """Wait until what building a graph imports is imported (by its own thread), so
        that nothing imports it concurrently (Python refuses that: a deadlock error)."""
        ...

    async def graph(self, ctx: HostedSession, parts: Contributions) -> Any:
        """The session's graph, built from the harness and `parts`."""
        ...

    def forget_model(self) -> None:
        """Make a new model for the next graph (the spec or effort changed)."""
        ...

    def check_model(self, spec: str) -> None:
        """Raise a `ModelConfigError` now if `spec` cannot be used here."""
        ...

    async def messages(self, config: dict[str, Any]) -> list[Any]:
        """The thread's conversation so far, read without building the graph."""
        ...

    async def value(self, config: dict[str, Any], key: str) -> Any:
        """One value of the thread's state (None: not there)."""
        ...

    async def delete_thread(self, thread_id: str) -> None: ...

    async def compact(
        self, graph: Any, config: dict[str, Any], report: Callable[[Compaction], Awaitable[None]]
    ) -> bool:
        """Summarize the conversation now, telling `report` as it starts and ends; False
        when there is nothing to summarize yet."""
        ...

    def here(self, done: str) -> None:
        """Refuse, with a `DeepacpError`, what only a thread in this process can have done
        to it (`done`: "rewound", "forked")."""
        ...

    async def close(self) -> None:
        """Let go of the graph, the model and what they hold."""
        ...
