"""ACP 1.25 fields and session updates the Python SDK (0.12.1, schema 1.21) has no model
for — `ToolCall.name`, `notice`, `compaction_update`, `compaction_summary_chunk` — and the
unstable `subagent_update`, written as the schema has them (checked against it by
tests/support/acp_schema.py), and what a client declares it shows.

Sent only to a client that declared them at `initialize` (`session.notices`,
`session.compaction`, `subagents`): the SDK's own models drop those fields, so they are
read from the raw capabilities (`declared_capabilities`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from acp import schema as S
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr
from pydantic.alias_generators import to_camel

from deepacp.events import CompactionStatus, NoticeSeverity


class NamedToolCallStart(S.ToolCallStart):
    """A `tool_call` with its tool's programmatic `name` (`ToolCall.name`, stable in 1.25)."""

    name: str | None = None


class _Update(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)


class NoticeUpdate(_Update):
    """`Notice`: fire-and-forget information that is not the agent's answer."""

    session_update: Literal["notice"]
    severity: NoticeSeverity
    title: str = Field(min_length=1)
    description: str | None = None


class CompactionUpdate(_Update):
    """`CompactionUpdate`: a compaction starts, or how it ended."""

    session_update: Literal["compaction_update"]
    compaction_id: str
    status: CompactionStatus
    error: str | None = None


class CompactionSummaryChunk(_Update):
    """`CompactionSummaryChunk`: text appended to a compaction's summary."""

    session_update: Literal["compaction_summary_chunk"]
    compaction_id: str
    content: S.TextContentBlock


class SubagentUpdate(_Update):
    """The unstable `SubagentUpdate`: the parent session announces a child session (its
    sub-agent) and reports its state (`{"state": "running"}`, `idle` with a stop reason)."""

    session_update: Literal["subagent_update"]
    session_id: str
    title: str | None = None
    description: str | None = None
    state: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Declared:
    """The newer session updates a client declared it shows."""

    notices: bool = False
    compaction: bool = False
    subagents: bool = False

    @classmethod
    def of(cls, capabilities: Any) -> Declared:
        """From `initialize`'s raw `clientCapabilities` (an object for each: `{}`)."""
        if not isinstance(capabilities, dict):
            return cls()
        session = capabilities.get("session")
        session = session if isinstance(session, dict) else {}
        return cls(
            notices=isinstance(session.get("notices"), dict),
            compaction=isinstance(session.get("compaction"), dict),
            subagents=isinstance(capabilities.get("subagents"), dict),
        )


class DeclaredCapabilities(S.ClientCapabilities):
    """The SDK's client capabilities, with what it does not parse kept beside them."""

    _declared: Declared = PrivateAttr(default_factory=Declared)
    """Never read from the client's fields, nor written back."""

    @property
    def declared(self) -> Declared:
        # Read where pydantic keeps it: the SDK's models answer unknown attributes
        # themselves (camelCase aliases), before pydantic would find a private one.
        declared: Declared = (self.__pydantic_private__ or {})["_declared"]
        return declared


def declared_capabilities(raw: Any) -> S.ClientCapabilities:
    """`initialize`'s raw `clientCapabilities` as the SDK reads them, and what it drops."""
    parsed = DeclaredCapabilities.model_validate(raw or {})
    parsed._declared = Declared.of(raw)
    return parsed


def declared_of(capabilities: S.ClientCapabilities) -> Declared:
    """What `capabilities` declared of the newer updates (nothing, when they came parsed
    by the SDK)."""
    if isinstance(capabilities, DeclaredCapabilities):
        return capabilities.declared
    return Declared()
