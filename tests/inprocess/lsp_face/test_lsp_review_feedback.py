"""Review that talks back (LSP): the hunks of a proposal the user rejects or lets go stale
are told to the agent on the next `deepacp.edit` in that workspace, once."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_lsp import LanguageClient

from tests.inprocess.lsp_face import test_lsp
from tests.inprocess.lsp_face.test_lsp import (
    BUFFER,
    DISK,
    EDIT_TWO_PLACES,
    actions,
    change_document,
    execute,
    open_document,
    start,
)

client = test_lsp.client  # the same editors, started the same way


def first_requests(record: Path, calls_per_run: int) -> list[dict]:
    """The first model request of each run."""
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    return lines[::calls_per_run]


def notes(request: dict) -> list[str]:
    return [
        m["content"]
        for m in request["messages"]
        if m["type"] == "human" and m["content"].startswith("[review]")
    ]


async def tidied(client: LanguageClient, root: Path) -> tuple[Path, str]:
    """calc.py (DISK on disk, BUFFER in the editor) after a "tidy" edit whose model proposes
    EDIT_TWO_PLACES: where the model records its requests, and the document's uri."""
    (root / "calc.py").write_text(DISK)
    record = await start(client, root, EDIT_TWO_PLACES)
    uri = open_document(client, root / "calc.py", BUFFER)
    await execute(client, "deepacp.edit", {"uri": uri, "instruction": "tidy"})
    return record, uri


async def test_rejected_and_stale_hunks_reach_the_next_edit_once(
    client: LanguageClient, tmp_path: Path
) -> None:
    record, uri = await tidied(client, tmp_path)
    reject = (await actions(client, uri, 1))["deepacp: Reject hunk"]
    await execute(client, reject.command.command, *reject.command.arguments)
    edited = BUFFER.replace("def sub(a, b):", "def sub(a, b, c=0):")
    change_document(client, uri, edited, 2)  # the other hunk goes stale

    await execute(client, "deepacp.edit", {"uri": uri, "instruction": "now the docs"})
    first, second = first_requests(record, 3)
    assert notes(first) == []
    [note] = notes(second)
    assert "calc.py, line 2: the user rejected your change" in note
    assert "return a + b + 0" in note and "return a + b  # unsaved" in note
    assert "calc.py, line 5: your proposed change was not applied" in note
    assert "def subtract(a, b):" in note and "def sub(a, b, c=0):" in note

    await execute(client, "deepacp.edit", {"uri": uri, "instruction": "and the tests"})
    assert notes(first_requests(record, 3)[2]) == []  # told once


async def test_no_note_after_everything_was_accepted(
    client: LanguageClient, tmp_path: Path
) -> None:
    record, uri = await tidied(client, tmp_path)
    await execute(client, "deepacp.acceptProposal")
    await execute(client, "deepacp.edit", {"uri": uri, "instruction": "again"})
    assert [notes(r) for r in first_requests(record, 3)] == [[], []]
