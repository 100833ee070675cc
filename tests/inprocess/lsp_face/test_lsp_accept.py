"""Accepting through the editor, over stdio with pytest-lsp as VS Code, Neovim and Emacs:
an accept claims its hunks before it sends their edit (two accepts never apply a change
twice), counts only what the editor's text shows (a refusal, an error or an empty "yes"
leaves the hunks pending), and a run that ends while another runs keeps both proposals."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as T
from pygls.exceptions import JsonRpcInternalError
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import captured_exception_key

from tests.inprocess.lsp_face import test_lsp
from tests.inprocess.lsp_face.test_lsp import (
    DISK,
    actions,
    apply,
    edit_call,
    edits_for,
    execute,
    hints,
    open_document,
    said,
    until,
    write_call,
)

client = test_lsp.client  # the same editors, started the same way


@pytest_lsp.fixture(params=["emacs"], config=test_lsp.CONFIG)
async def emacs(request, lsp_client: LanguageClient):
    """One editor, for what does not depend on the client's capabilities."""
    lsp_client.client_name = request.param
    yield
    await lsp_client.shutdown_session()


DOCSTRING = '    """a - b"""\n'
INSERT_AND_CREATE = [
    edit_call("e", "calc.py", "def sub(a, b):\n", f"def sub(a, b):\n{DOCSTRING}"),
    write_call("n", "notes/todo.md", "- test\n- ship\n"),
    {"content": "Documented sub and added notes."},
]
WITH_DOCSTRING = DISK.replace("def sub(a, b):\n", f"def sub(a, b):\n{DOCSTRING}")


async def start(client: LanguageClient, root: Path, turns: list[dict]) -> Path:
    """Initialize as the editor does (Neovim names itself: it applies versioned edits)."""
    script = root.parent / f"{root.name}-script.json"
    record = root.parent / f"{root.name}-requests.jsonl"
    script.write_text(json.dumps({"record": str(record), "turns": turns}))
    name = client.client_name
    info = T.ClientInfo("Neovim", "0.7.2") if name.startswith("neovim") else None
    await client.initialize_session(
        T.InitializeParams(
            capabilities=client_capabilities(name),
            client_info=info,
            root_uri=root.as_uri(),
            initialization_options={"model": f"scripted:{script}"},
        )
    )
    return record


async def proposed(client: LanguageClient, tmp_path: Path) -> tuple[str, str, str]:
    """calc.py open; a proposal that inserts a docstring into it and creates notes/todo.md."""
    (tmp_path / "calc.py").write_text(DISK)
    await start(client, tmp_path, INSERT_AND_CREATE)
    uri = open_document(client, tmp_path / "calc.py", DISK)
    result = await execute(client, "deepacp.edit", {"uri": uri, "instruction": "document"})
    return uri, (tmp_path / "notes" / "todo.md").as_uri(), result["proposal"]


def accept_twice_in_one_write(client: LanguageClient) -> list[asyncio.Future]:
    """Two `deepacp.acceptProposal` requests in one write, as a key pressed twice sends."""
    protocol = client.protocol
    writer, burst = protocol.writer, bytearray()

    class OneWrite:
        def write(self, data: bytes) -> None:
            burst.extend(data)

    protocol.writer = OneWrite()  # type: ignore[assignment]
    params = T.ExecuteCommandParams(command="deepacp.acceptProposal", arguments=[])
    try:
        sent = [protocol.send_request("workspace/executeCommand", params) for _ in range(2)]
    finally:
        protocol.writer = writer
    writer.write(bytes(burst))  # type: ignore[union-attr]
    return [asyncio.wrap_future(f) for f in sent]


def check_applied_once(client: LanguageClient, uri: str, new_file: str) -> None:
    assert client.texts[uri][0] == WITH_DOCSTRING  # the insertion once
    assert client.texts[new_file][0] == "- test\n- ship\n"  # the new file exactly
    assert len(client.applied_edits) == 2  # one edit per file, each sent once
    for params in client.applied_edits:  # each names the version it was made for
        if client.client_name == "visual-studio-code" or params.edit.document_changes:
            [change] = [c for c in params.edit.document_changes if hasattr(c, "edits")]
            expected = 1 if change.text_document.uri == uri else None
            assert change.text_document.version == expected
    assert [m for m in said(client, "already being applied")] == [
        "deepacp: already being applied: calc.py, notes/todo.md (new) (waiting for the "
        "editor); nothing sent again"
    ]
    assert said(client, "not saved yet") == [
        "deepacp: accepted into the editor, not saved yet: calc.py, notes/todo.md (new)"
    ]


async def test_two_accepts_in_one_write_apply_the_proposal_once(
    client: LanguageClient, tmp_path: Path
) -> None:
    uri, new_file, _ = await proposed(client, tmp_path)
    first, second = await asyncio.gather(*accept_twice_in_one_write(client))
    assert first["applied"] is True and first["files"] == [uri, new_file]
    assert second == {"applied": False, "reason": "already being applied"}
    check_applied_once(client, uri, new_file)
    await until(lambda: hints(client, uri) == [] and hints(client, new_file) == [], "no hints")


async def test_an_accept_while_the_editor_is_slow_to_answer_sends_nothing(
    client: LanguageClient, tmp_path: Path
) -> None:
    uri, new_file, proposal = await proposed(client, tmp_path)
    client.gate = asyncio.Event()  # the editor holds its answer
    first = asyncio.ensure_future(execute(client, "deepacp.acceptProposal", proposal))
    await until(lambda: client.applied_edits, "the first edit")
    second = asyncio.ensure_future(execute(client, "deepacp.acceptProposal", proposal))
    await until(lambda: second.done() or len(client.applied_edits) > 1, "the second accept")
    client.gate.set()
    assert (await second) == {"applied": False, "reason": "already being applied"}
    assert (await first)["files"] == [uri, new_file]
    check_applied_once(client, uri, new_file)


def refuse(client: LanguageClient, edit: T.WorkspaceEdit):
    return T.ApplyWorkspaceEditResult(applied=False, failure_reason="declined by the user")


def fail(client: LanguageClient, edit: T.WorkspaceEdit):
    """Emacs 30 asked to show a diff of a file that does not exist yet: an error reply."""
    raise JsonRpcInternalError(message="Opening input file: No such file or directory")


def say_yes_and_do_nothing(client: LanguageClient, edit: T.WorkspaceEdit):
    return T.ApplyWorkspaceEditResult(applied=True)  # Emacs 30 set to show a diff


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (refuse, "declined by the user"),
        (fail, "it answered with an error: "),
        (say_yes_and_do_nothing, "the editor answered that it applied it, but its text"),
    ],
    ids=["refused", "error", "empty-yes"],
)
async def test_an_edit_the_editor_does_not_apply_is_not_accepted(
    emacs: LanguageClient, tmp_path: Path, answer, why: str
) -> None:
    client = emacs
    (tmp_path / "calc.py").write_text(DISK)
    await start(client, tmp_path, INSERT_AND_CREATE[:1] + INSERT_AND_CREATE[2:])
    uri = open_document(client, tmp_path / "calc.py", DISK)
    proposal = (await execute(client, "deepacp.edit", {"uri": uri, "instruction": "doc"}))[
        "proposal"
    ]
    client.respond = answer
    running = asyncio.ensure_future(execute(client, "deepacp.acceptProposal", proposal))
    await until(lambda: client.applied_edits, "the edit")
    # The client's answer goes out in a callback its handler's end scheduled; an editor
    # answers before its next request, so that callback runs first.
    await asyncio.sleep(0)
    # The editor sends its changes before its next request about calc.py: if none came,
    # the edit is not in its text.
    offered = await actions(client, uri, 5)
    outcome = await running
    # pytest-lsp fails a test whose client handler raised; here that error is the point.
    client._pytest_item.stash[captured_exception_key] = None  # type: ignore[attr-defined]
    assert outcome["applied"] is False
    [not_applied] = outcome["not_applied"]
    assert not_applied["file"] == "calc.py" and why in not_applied["reason"]
    assert said(client, "did not apply") == [
        f"deepacp: nothing accepted; the editor did not apply calc.py ({not_applied['reason']})"
    ]
    # Still pending: its hint stays, its accept is offered, and an editor that applies it
    # gets it once.
    assert [d.message for d in hints(client, uri)] == ['deepacp proposes: """a - b"""']
    assert "deepacp: Accept this hunk" in offered
    client.respond = test_lsp.apply_as_an_editor
    assert (await execute(client, "deepacp.acceptProposal", proposal))["files"] == [uri]
    assert client.texts[uri][0] == WITH_DOCSTRING


async def test_a_code_action_the_editor_did_not_apply_is_not_counted(
    emacs: LanguageClient, tmp_path: Path
) -> None:
    client = emacs
    uri, _, proposal = await proposed(client, tmp_path)
    accept = (await actions(client, uri, 5))["deepacp: Accept this hunk"]
    # Emacs 30 set to show a diff: the edit is not applied, the bookkeeping still runs. The
    # text is still the one before (eglot 1.9 sends its change after the command), so the
    # server waits for the editor's next word on calc.py: here, a request about it.
    outcome = await execute(client, accept.command.command, *accept.command.arguments)
    assert outcome == {"applied": False, "reason": "waiting for the editor's text"}
    assert "deepacp: Accept this hunk" in await actions(client, uri, 5)
    await until(lambda: said(client, "did not apply"), "the message")
    assert said(client, "did not apply") == [
        "deepacp: the editor did not apply the change to calc.py; it is still pending"
    ]
    assert len(hints(client, uri)) == 1
    # Applied for real (the editor sends its change first), it counts.
    text = apply(DISK, edits_for(accept.edit, uri))
    test_lsp.change_document(client, uri, text, 2)
    outcome = await execute(client, accept.command.command, *accept.command.arguments)
    assert outcome["applied"] is True
    await until(lambda: hints(client, uri) == [], "the hint to go")
    assert (await execute(client, "deepacp.acceptProposal", proposal))["files"] == [
        (tmp_path / "notes" / "todo.md").as_uri()
    ]


SLOW_AND_QUICK = [
    edit_call("a", "calc.py", "return a - b", "return a - b  # checked", "Check sub."),
    {"content": "thinking " * 300, "delay_ms": 20, "when": "ALPHA"},
    edit_call("b", "calc.py", "return a + b", "return b + a", "Swap add."),
    {"content": "Swapped add.", "when": "BETA"},
]
SLOW_AND_QUICK[0]["when"] = "ALPHA"
SLOW_AND_QUICK[2]["when"] = "BETA"


async def test_an_edit_that_ends_while_another_runs_keeps_both_proposals(
    emacs: LanguageClient, tmp_path: Path
) -> None:
    client = emacs
    (tmp_path / "calc.py").write_text(DISK)
    record = await start(client, tmp_path, SLOW_AND_QUICK)
    uri = open_document(client, tmp_path / "calc.py", DISK)
    slow = asyncio.ensure_future(
        execute(client, "deepacp.edit", {"uri": uri, "instruction": "ALPHA check sub"})
    )
    await until(lambda: record.exists() and len(record.read_text().splitlines()) >= 2, "ALPHA")
    quick = await execute(client, "deepacp.edit", {"uri": uri, "instruction": "BETA swap add"})
    await execute(client, "deepacp.cancel")  # ALPHA ends last, with its edit kept
    alpha = await slow
    assert alpha["partial"] is True and alpha["proposal"] != quick["proposal"]
    # Both proposals keep their hints, and each announcement names the other.
    await until(lambda: len(hints(client, uri)) == 2, "both proposals' hints")
    assert sorted(d.message for d in hints(client, uri)) == [
        "deepacp (partial: the run was cancelled): Check sub.",
        "deepacp: Swap add.",
    ]
    [announced] = said(client, "cancelled; the 1 change")
    assert announced.endswith(f"(also still open: {quick['proposal']}: BETA swap add in calc.py)")
    # Each has its own actions, named since two proposals share the file.
    titles = set(await actions(client, uri, 1))
    assert f"deepacp: Accept this hunk ({quick['proposal']}: BETA swap add)" in titles
    assert f"deepacp: Reject proposal ({alpha['proposal']}: ALPHA check sub)" in titles
    # An accept with no proposal named takes the latest; the other stays for the next one.
    assert (await execute(client, "deepacp.acceptProposal"))["files"] == [uri]
    assert len(hints(client, uri)) == 1
    assert (await execute(client, "deepacp.acceptProposal"))["files"] == [uri]
    assert client.texts[uri][0] == DISK.replace("a + b", "b + a").replace(
        "a - b", "a - b  # checked"
    )
