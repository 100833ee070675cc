"""What a session part may use of its session (`parts/`): never the Session itself."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

RECURSION_LIMIT = 1000

if TYPE_CHECKING:
    from deepacp.backends.protocol import Backend
    from deepacp.session.handler import SessionHandler
    from deepacp.session.hosts import Host
    from deepacp.session.storage.records import Records, SessionRecord
    from deepacp.session.turns.approvals import ApprovalPolicy
    from deepacp.session.turns.queue import TurnQueue


@dataclass
class SessionContext:
    """What a part may use of its session (never the Session itself). `record` and
    `backend` are the session's as they are now: the core keeps them current."""

    record: SessionRecord
    records: Records
    handler: SessionHandler
    host: Host
    policy: ApprovalPolicy
    backend: Backend
    turns: TurnQueue
    roots: tuple[str, ...]
    """The workspace roots: the record's folder, then the editor's additional folders."""
    rebuild: Callable[..., None]
    """The graph is built again at the next turn (a part changed what it contributes;
    `keep_model=True`: with the same model object)."""
    graph: Callable[[], Awaitable[Any]]
    """The session's compiled graph (built now if it must be)."""
    history: Callable[[], Awaitable[list[Any]]]
    """The events that redraw the conversation so far (`Session.history`)."""
    clear: Callable[[], Awaitable[None]]
    """A fresh conversation in the session (`/clear`)."""
    taken_back: Callable[[set[str]], Awaitable[None]]
    """Tell every part that the turns of these prompts (message ids) were taken back."""
    max_model_calls: int | None = None
    """How often the model may answer in one turn (`deepacp run --max-turns`; None: no
    limit). A turn that reaches it ends `max_turn_requests`."""

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def config(self) -> dict[str, Any]:
        """The thread's run config."""
        configurable: dict[str, Any] = {"thread_id": self.record.thread_id}
        if self.max_model_calls is not None:  # the harness is loaded by the time of a turn
            from deepacp.harness import MAX_MODEL_CALLS

            configurable[MAX_MODEL_CALLS] = self.max_model_calls
        return {"configurable": configurable, "recursion_limit": RECURSION_LIMIT}

    def update(self, **changes: Any) -> SessionRecord:
        """Store a change to the session's record, and keep it as the record."""
        self.record = self.records.update(self.record, **changes)
        return self.record
