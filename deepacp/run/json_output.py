"""`deepacp run`'s output for scripts: one JSON object at the end (`--output-format json`)
or one JSON event a line as it happens (`stream-json`); nothing else on stdout."""

from __future__ import annotations

import json
from typing import Any

from deepacp import events
from deepacp.run.output import RunResult, shown_path
from deepacp.run.text_output import Unstreamed


def _line(value: dict[str, Any]) -> None:
    print(json.dumps(value, ensure_ascii=False), flush=True)


class JsonOutput(Unstreamed):
    """One JSON object once the run ends; what is asked on the way goes to stderr."""

    def finish(self, result: RunResult) -> None:
        _line(result.as_json())


class StreamJsonOutput(JsonOutput):
    """One JSON event a line as the turn happens, the result line last."""

    def _diff(self, diff: events.FileDiff | None) -> dict[str, Any]:
        if diff is None:
            return {}
        path = shown_path(diff.path, self.cwd)
        return {"diff": {"path": path, "old_text": diff.old_text, "new_text": diff.new_text}}

    def event(self, event: events.Event) -> None:
        if isinstance(event, events.MessageChunk):
            _line({"type": "text", "text": event.text})
        elif isinstance(event, events.ThoughtChunk):
            _line({"type": "thinking", "text": event.text})
        elif isinstance(event, events.ToolStarted):
            call = {"id": event.tool_call_id, "name": event.name, "kind": event.kind}
            shown = {"title": event.title, "args": event.args, **self._diff(event.diff)}
            _line({"type": "tool_call", **call, "status": "pending", **shown})
        elif isinstance(event, events.ToolRunning):
            _line({"type": "tool_call", "id": event.tool_call_id, "status": "running"})
        elif isinstance(event, events.ToolOutput):
            _line({"type": "tool_output", "id": event.tool_call_id, "text": event.text})
        elif isinstance(event, events.ToolFinished):
            done = {"status": event.status, "output": event.text, **self._diff(event.diff)}
            _line({"type": "tool_call", "id": event.tool_call_id, **done})
        elif isinstance(event, events.SubagentStep):
            step = {"id": event.step_id, "name": event.name, "title": event.title}
            _line(
                {
                    "type": "subagent_call",
                    "task": event.tool_call_id,
                    **step,
                    "status": event.status,
                }
            )
        elif isinstance(event, events.PlanUpdated):
            entries = [{"content": e.content, "status": e.status} for e in event.entries]
            _line({"type": "plan", "entries": entries})
        elif isinstance(event, events.Notice):
            _line({"type": "notice", "text": event.text})
        elif isinstance(event, events.UsageUpdated):
            _line({"type": "context", "used": event.used, "size": event.size})

    def asking(self, request: events.PermissionRequest | events.Question) -> None:
        if isinstance(request, events.Question):
            ask = {"type": "question", "id": request.tool_call_id, "question": request.question}
            _line({**ask, "choices": list(request.choices)})
        else:
            asked = {"type": "permission", "id": request.tool_call_id, "title": request.title}
            _line({**asked, "kind": request.kind, "status": "asked", **self._diff(request.diff)})
        super().asking(request)

    def decided(
        self, request: events.PermissionRequest, outcome: events.PermissionKind, why: str
    ) -> None:
        asked = {"type": "permission", "id": request.tool_call_id, "title": request.title}
        _line({**asked, "status": outcome, "reason": why or None})
        super().decided(request, outcome, why)
