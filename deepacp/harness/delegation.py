"""Which `task` call a sub-agent is running under (readable without importing LangChain)."""

from __future__ import annotations

from contextvars import ContextVar

current_task_call: ContextVar[str | None] = ContextVar("deepacp_task_call", default=None)
"""The id of the parent's `task` tool call while its sub-agent runs; None in the main agent."""
