"""The server's cheaper pydantic models (deepacp/acp/lean.py) read and write the protocol
exactly as the ordinary ones do; each check runs in a fresh interpreter, since the changes
are process-wide."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = r"""
import json, sys
if sys.argv[1] == "lean":
    from deepacp.acp.lean import import_acp_schema
    import_acp_schema()
from acp import schema as S
built_at_import = S.SessionNotification.__pydantic_complete__
messages = [
    {"sessionId": "s1", "update": {"sessionUpdate": "user_message_chunk",
     "content": {"type": "text", "text": "fix the bug"}}},
    {"sessionId": "s1", "update": {"sessionUpdate": "tool_call", "toolCallId": "c1",
     "title": "Edit `a.py`", "kind": "edit", "status": "pending",
     "content": [{"type": "diff", "path": "/w/a.py", "oldText": "x = 1", "newText": "x = 2"}],
     "locations": [{"path": "/w/a.py", "line": 3}], "rawInput": {"path": "a.py"}}},
    {"sessionId": "s1", "update": {"sessionUpdate": "tool_call_update", "toolCallId": "c1",
     "status": "completed", "content": [{"type": "content",
     "content": {"type": "text", "text": "done"}}]}},
    {"sessionId": "s1", "update": {"sessionUpdate": "plan", "entries": [
     {"content": "read", "status": "completed", "priority": "medium"}]}},
]
out = [S.SessionNotification.model_validate(m).model_dump(mode="json", by_alias=True,
       exclude_none=True) for m in messages]
try:
    S.SessionNotification.model_validate({"sessionId": 3, "update": {}})
    error = None
except Exception as exc:
    error = type(exc).__name__
from pydantic import BaseModel, ConfigDict
class Args(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)
    path: str
    '''The file to read, relative to the workspace.'''
described = Args.model_json_schema()["properties"]["path"].get("description")
print(json.dumps({"built": built_at_import, "out": out, "error": error,
                  "described": described}))
"""


def probe(mode: str, folder: Path) -> dict:
    script = folder / "probe.py"  # a file: pydantic reads docstrings from the source
    script.write_text(PROBE)
    done = subprocess.run(
        [sys.executable, str(script), mode], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def test_lean_models_read_and_write_the_protocol_as_before(tmp_path: Path) -> None:
    plain, lean = probe("plain", tmp_path), probe("lean", tmp_path)
    assert lean["out"] == plain["out"]
    assert lean["error"] == plain["error"] == "ValidationError"
    assert plain["built"] is True
    assert lean["built"] is False  # built when first used, not at import


def test_tool_arguments_keep_their_descriptions(tmp_path: Path) -> None:
    """What the model reads of a tool's arguments is untouched (only the ACP schema's
    docstrings are skipped, while it is imported)."""
    assert probe("lean", tmp_path)["described"] == "The file to read, relative to the workspace."
