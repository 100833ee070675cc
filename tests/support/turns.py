"""The scripted model's turns (`deepacp.testing.ScriptedChatModel`) written as calls: a tool
call, a turn that makes calls, and the edits and writes most tests script."""

from __future__ import annotations

from typing import Any


def call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    """One tool call the model makes."""
    return {"id": call_id, "name": name, "args": args}


def calls(*made: dict[str, Any], said: str = "", **extra: Any) -> dict[str, Any]:
    """A turn that says `said` (if anything) and makes the tool calls `made`; `extra` adds
    other turn fields (`reasoning`, `repeat`, …)."""
    turn: dict[str, Any] = {"content": said} if said else {}
    return turn | extra | {"tool_calls": list(made)}


def edit(call_id: str, path: str, old: str, new: str, said: str = "") -> dict[str, Any]:
    """A turn that edits `old` into `new` in `path`."""
    return calls(
        call(call_id, "edit_file", file_path=path, old_string=old, new_string=new), said=said
    )


def write(call_id: str, path: str, content: str, said: str = "") -> dict[str, Any]:
    """A turn that writes `content` to `path`."""
    return calls(call(call_id, "write_file", file_path=path, content=content), said=said)


def task(call_id: str, description: str, subagent: str = "general-purpose") -> dict[str, Any]:
    """A turn that hands `description` to the subagent `subagent`."""
    return calls(call(call_id, "task", description=description, subagent_type=subagent))


def pytest_command(python: str, *args: str) -> str:
    """A command the model runs: pytest on a test project, as its owner would. Without the
    plugins of this venv (LangSmith's, Hypothesis', pytest-lsp's), which are not what is
    tested and cost 6 s of CPU to load."""
    return " ".join(["PYTEST_DISABLE_PLUGIN_AUTOLOAD=1", python, "-m", "pytest", "-q", *args])
