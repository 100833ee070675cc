"""What `deepacp run` prints for a sub-agent's calls: under its task, as they start."""

from __future__ import annotations

import json

from deepacp.events import SubagentStep
from deepacp.run.json_output import StreamJsonOutput
from deepacp.run.text_output import TextOutput

STEPS = [
    SubagentStep("t1", "c1", "ls", "List .", "read", "in_progress"),
    SubagentStep("t1", "c1", "ls", "List .", "read", "completed"),
    SubagentStep("t1", "c2", "edit_file", "Edit a.py", "edit", "failed"),
]


def test_text_shows_a_sub_agents_calls_under_its_task(capsys) -> None:
    output = TextOutput(cwd="/")
    for step in STEPS:
        output.event(step)
    assert capsys.readouterr().out == "   -> List .\n   -> Edit a.py (failed)\n"


def test_stream_json_has_a_line_for_each_step(capsys) -> None:
    output = StreamJsonOutput(cwd="/")
    for step in STEPS:
        output.event(step)
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(line["type"], line["task"], line["title"], line["status"]) for line in lines] == [
        ("subagent_call", "t1", "List .", "in_progress"),
        ("subagent_call", "t1", "List .", "completed"),
        ("subagent_call", "t1", "Edit a.py", "failed"),
    ]
