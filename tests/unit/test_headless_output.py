"""What `deepacp run` prints for a turn's events."""

from __future__ import annotations

from deepacp.events import SubagentStep
from deepacp.headless import TerminalHandler


async def test_a_headless_run_prints_a_sub_agents_calls_under_its_task(capsys) -> None:
    terminal = TerminalHandler(interactive=False, cwd="/")
    for status in ("in_progress", "completed"):
        await terminal.emit(SubagentStep("t1", "c1", "ls", "List .", "read", status))
    await terminal.emit(SubagentStep("t1", "c2", "edit_file", "Edit a.py", "edit", "failed"))
    assert capsys.readouterr().out == "   -> List .\n   -> Edit a.py (failed)\n"
