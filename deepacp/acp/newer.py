"""What the ACP face sends for notices, compactions and sub-agents' steps: the newer
updates (`newer_schema.py`) to a client that declared them, today's updates otherwise.

- A `Notice` is a `notice` update, or agent text (the usual translation, `updates.py`).
- A `Compaction` is a `compaction_update` as it starts, its summary as one
  `compaction_summary_chunk`, and a `compaction_update` as it ends; nothing otherwise.
- A `SubagentStep` is a tool call in the sub-agent's own session, announced on this one by
  `subagent_update` (running, then idle once its card ends); otherwise the `task` card's
  content lists the sub-agent's calls, each with its title and status, updated in place
  (the finished card shows the report, as a `session/load` redraws it).

Compactions and child sessions are not history: a `session/load` redraws the conversation
and the finished cards (the `task` card with its report), and of the notices only those a
replay finds (the session's opening ones, a goal's verdicts), as they were sent live.
"""

from __future__ import annotations

from typing import Any

from acp.helpers import start_tool_call, text_block, tool_content, update_tool_call

from deepacp.acp.newer_schema import (
    CompactionSummaryChunk,
    CompactionUpdate,
    Declared,
    NamedToolCallStart,
    NoticeUpdate,
    SubagentUpdate,
)
from deepacp.events import Compaction, Event, Notice, SubagentStep, ToolFinished, ToolStarted

Outgoing = tuple[str | None, Any]
"""An update, and the session it is for (None: the handler's own)."""
TITLE_CHARS = 80
DESCRIPTION_CHARS = 200
STEP_WORDS = {"in_progress": "running", "completed": "done", "failed": "failed"}
CHILD_STOPS = {"completed": "end_turn", "failed": "error"}


def _line(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def notice_update(notice: Notice) -> NoticeUpdate:
    """A notice's title stands alone (its text's first clause when it has none); the
    whole text is the description."""
    title = notice.title or notice.text.strip().split("\n")[0].split(": ")[0].rstrip(".")
    return NoticeUpdate(
        session_update="notice",
        severity=notice.severity,
        title=_line(title, TITLE_CHARS) or "Notice",
        description=notice.text.strip() or None,
    )


def compaction_updates(compaction: Compaction) -> list[Any]:
    chunks: list[Any] = []
    if compaction.summary:
        chunks.append(
            CompactionSummaryChunk(
                session_update="compaction_summary_chunk",
                compaction_id=compaction.compaction_id,
                content=text_block(compaction.summary),
            )
        )
    end = CompactionUpdate(
        session_update="compaction_update",
        compaction_id=compaction.compaction_id,
        status=compaction.status,
        error=compaction.error or None,
    )
    return [*chunks, end]


class NewerUpdates:
    """One session's translation of the events the SDK's schema has no update for."""

    def __init__(self, session_id: str, declared: Declared) -> None:
        self.session_id = session_id
        self.declared = declared
        self._cards: dict[str, ToolStarted] = {}
        """The cards started and not finished (a sub-agent's is described from its call)."""
        self._steps: dict[str, dict[str, SubagentStep]] = {}
        """Each card's sub-agent steps so far, by the sub-agent's ids."""

    def own(self, event: Event) -> list[Outgoing] | None:
        """The updates for `event`, or None when the usual translation stands."""
        if isinstance(event, Notice):
            return [(None, notice_update(event))] if self.declared.notices else None
        if isinstance(event, Compaction):
            if not self.declared.compaction:
                return []
            return [(None, update) for update in compaction_updates(event)]
        if isinstance(event, SubagentStep):
            return self._step(event)
        return None

    def follow(self, event: Event) -> list[Outgoing]:
        """What goes after the usual updates of `event`: a child session's end."""
        if isinstance(event, ToolStarted):
            self._cards[event.tool_call_id] = event
        elif isinstance(event, ToolFinished):
            self._cards.pop(event.tool_call_id, None)
            steps = self._steps.pop(event.tool_call_id, {})
            if steps and self.declared.subagents:
                child = self.child_id(event.tool_call_id)
                unfinished = [s for s in steps.values() if s.status == "in_progress"]
                idle = {"state": "idle", "stopReason": CHILD_STOPS[event.status]}
                return [  # a call the sub-agent never finished (a cancel) did not complete
                    *((child, update_tool_call(s.step_id, status="failed")) for s in unfinished),
                    (None, self._child(event.tool_call_id, idle)),
                ]
        return []

    def child_id(self, card_id: str) -> str:
        return f"{self.session_id}/subagent/{card_id}"

    def _child(self, card_id: str, state: dict[str, Any], card: ToolStarted | None = None) -> Any:
        fields: dict[str, Any] = {}
        if card is not None:
            args = card.args
            title = args.get("subagent_type") or card.title
            brief = args.get("description") or args.get("goal") or ""
            fields = {
                "title": _line(str(title), TITLE_CHARS),
                "description": _line(str(brief), DESCRIPTION_CHARS) or None,
            }
        return SubagentUpdate(
            session_update="subagent_update",
            session_id=self.child_id(card_id),
            state=state,
            **fields,
        )

    def _step(self, step: SubagentStep) -> list[Outgoing]:
        steps = self._steps.setdefault(step.tool_call_id, {})
        first, known = not steps, step.step_id in steps
        steps[step.step_id] = step
        if not self.declared.subagents:
            lines = [
                tool_content(text_block(f"{s.title} ({STEP_WORDS[s.status]})"))
                for s in steps.values()
            ]
            return [(None, update_tool_call(step.tool_call_id, content=lines))]
        out: list[Outgoing] = []
        if first:  # announced before any of the child's own updates
            card = self._cards.get(step.tool_call_id)
            out.append((None, self._child(step.tool_call_id, {"state": "running"}, card)))
        child = self.child_id(step.tool_call_id)
        if known:
            out.append((child, update_tool_call(step.step_id, status=step.status)))
        else:
            call = start_tool_call(step.step_id, step.title, kind=step.kind, status=step.status)
            out.append((child, NamedToolCallStart(**dict(call), name=step.name)))
        return out
