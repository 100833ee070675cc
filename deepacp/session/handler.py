"""What a face gives a session: somewhere to send its events, someone to ask."""

from __future__ import annotations

from typing import Protocol

from deepacp.events import Event, PermissionKind, PermissionRequest, Question


class SessionHandler(Protocol):
    async def emit(self, event: Event) -> None: ...

    async def ask_permission(self, request: PermissionRequest) -> PermissionKind | None:
        """The option the user picked, or None when the question was cancelled."""
        ...

    async def ask(self, question: Question) -> str | None:
        """The user's answer, `ASK_IN_CHAT` to end the turn with the question, or None
        when the user dismissed it (the turn is cancelled)."""
        ...
