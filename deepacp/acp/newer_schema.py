"""ACP 1.25 fields the Python SDK (0.12.1, schema 1.21) has no model for, written as the
1.25 schema has them (checked against it by tests/support/acp_schema.py)."""

from __future__ import annotations

from acp import schema as S


class NamedToolCallStart(S.ToolCallStart):
    """A `tool_call` with its tool's programmatic `name` (`ToolCall.name`, stable in 1.25)."""

    name: str | None = None
