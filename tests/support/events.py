"""One of each kind of event a conversation redraws with, for tests that write events out
and compare them (as ACP updates, as saved replays)."""

from __future__ import annotations

from deepacp.events import (
    Cost,
    Event,
    FileDiff,
    Location,
    MessageChunk,
    Notice,
    PlanEntry,
    PlanUpdated,
    ThoughtChunk,
    ToolFinished,
    ToolStarted,
    UsageUpdated,
    UserMessage,
)

EDIT_ARGS = {"file_path": "a.py", "@": "tuple", "items": [1, [2, {"x": None}]], "n": 1.5}
"""A tool call's arguments with keys and values an encoder could mistake for its own."""

SAMPLE_EVENTS: list[Event] = [
    UserMessage("fix it ✓", "prompt-1"),
    Notice("Goal not met yet."),
    ThoughtChunk("hmm", "reply-1-thought"),
    MessageChunk("On it.", "reply-1"),
    ToolStarted(
        "c1",
        "edit_file",
        "edit",
        "Edit `a.py`",
        EDIT_ARGS,
        (Location("/w/a.py", 3),),
        FileDiff("/w/a.py", "x = 1", "x = 2"),
    ),
    ToolStarted("c2", "ls", "search", "List `.`", {}),
    ToolFinished("c1", "completed", "done", FileDiff("/w/a.py", None, "new"), ()),
    ToolFinished("c2", "failed", "no such folder"),
    PlanUpdated((PlanEntry("read", "completed"), PlanEntry("fix", "pending", "high"))),
    UsageUpdated(120, 200_000, Cost(0.25, "USD")),
    UsageUpdated(120, 200_000),
]
