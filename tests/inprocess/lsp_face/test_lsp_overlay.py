"""`deepacp lsp`: the agent's commands run over its proposal, and what they write joins it.

Skipped, with the reason, where the kernel overlay or the sandbox cannot work here."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from lsprotocol import types as T
from pytest_lsp import LanguageClient

from deepacp.backends.proposal_shell import overlay_problem
from tests.inprocess.lsp_face import test_lsp
from tests.inprocess.lsp_face.test_lsp import edit_call, edits_for, execute, open_document, start
from tests.support.turns import pytest_command

client = test_lsp.client  # the same editors, started the same way

pytestmark = pytest.mark.skipif(
    overlay_problem() is not None, reason=f"no overlay here: {overlay_problem()}"
)

BUGGY = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
PYTEST = pytest_command(shlex.quote(sys.executable), "test_calc.py")


def run(call_id: str, command: str) -> dict:
    return {"tool_calls": [{"id": call_id, "name": "execute", "args": {"command": command}}]}


def tool_results(record: Path) -> dict[str, str]:
    """What each command told the model, by call id."""
    found = {}
    for line in record.read_text().splitlines():
        for message in json.loads(line)["messages"]:
            if message["type"] == "tool":
                found[message["tool_call_id"]] = message["content"]
    return found


async def test_tests_run_on_the_proposal_and_what_commands_write_is_proposed(
    client: LanguageClient, tmp_path: Path
) -> None:
    (tmp_path / "calc.py").write_text(BUGGY)
    (tmp_path / "test_calc.py").write_text(TEST)
    turns = [
        edit_call("fix", "calc.py", "a - b", "a + b", "Add, not subtract."),
        run("test", PYTEST),
        run("out", "echo done > out.txt"),
        {"content": "Fixed add; the test passes."},
    ]
    record = await start(client, tmp_path, turns, shell="allow")
    uri = open_document(client, tmp_path / "calc.py", BUGGY)
    result = await execute(client, "deepacp.edit", {"uri": uri, "instruction": "fix add"})
    tested = tool_results(record)["test"]
    assert "1 passed" in tested and "failed" not in tested  # the proposed code, not the disk's
    out_uri = (tmp_path / "out.txt").as_uri()
    assert result["files"] == sorted([uri, out_uri])
    # Nothing reached the user's files: not the fix, not out.txt, not pytest's caches.
    assert (tmp_path / "calc.py").read_text() == BUGGY
    assert sorted(p.name for p in tmp_path.iterdir()) == ["calc.py", "test_calc.py"]

    outcome = await execute(client, "deepacp.acceptProposal", result["proposal"])
    assert outcome["applied"] is True
    [applied] = [a for a in client.applied_edits if edits_for(a.edit, out_uri)]  # one per file
    assert "".join(e.new_text for e in edits_for(applied.edit, out_uri)) == "done\n"
    if client.client_name == "visual-studio-code":  # the editor creates the file
        creates = [c for c in applied.edit.document_changes or [] if isinstance(c, T.CreateFile)]
        assert [c.uri for c in creates] == [out_uri]
