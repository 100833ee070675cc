"""`deepacp lsp` with pytest-lsp's client, as VS Code and Neovim would drive it: the server in
the test's process (`tests/support/lsp_inprocess.py`); the binary's start-up is in
tests/e2e/test_lsp_start.py, real editors in tests/e2e/test_neovim.py and test_emacs.py."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Union

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import LanguageClient, client_capabilities

from deepacp.backends.sandbox import sandbox_problem
from tests.support.lsp import HUNK_ACTIONS
from tests.support.lsp_inprocess import InProcess
from tests.support.turns import edit as edit_call
from tests.support.turns import write as write_call

DEEPACP = str(Path(sys.executable).parent / "deepacp")
HOME = tempfile.mkdtemp(prefix="deepacp-lsp-home-")
# The three tiers of review: VS Code (file operations and annotations in documentChanges),
# Neovim 0.7 (neither, and no showDocument; Neovim 0.11 runs for real in test_neovim.py) and
# Emacs (documentChanges without file operations).
CLIENTS = ["visual-studio-code", "neovim@v0.7.0", "emacs"]


def make_client() -> LanguageClient:
    """pytest-lsp's client, with code actions that carry a command kept as code actions."""
    from pytest_lsp.client import make_test_lsp_client

    client = make_test_lsp_client()
    converter = client.protocol._converter

    def structure(obj, _):
        if isinstance(obj.get("command"), str) and "kind" not in obj and "edit" not in obj:
            return converter.structure(obj, T.Command)
        return converter.structure(obj, T.CodeAction)

    converter.register_structure_hook(Union[T.Command, T.CodeAction], structure)  # noqa: UP007
    client.applied_edits = []
    client.message_requests = []
    client.answer = "Allow once"
    client.texts = {}  # uri -> [text, version]: the editor's documents
    client.respond = apply_as_an_editor  # how the editor answers an edit
    client.gate = None  # an asyncio.Event: the editor answers edits once it is set

    @client.feature(T.WORKSPACE_APPLY_EDIT)
    async def apply_edit(params: T.ApplyWorkspaceEditParams):
        client.applied_edits.append(params)
        if client.gate is not None:
            await client.gate.wait()
        return client.respond(client, params.edit)

    @client.feature(T.WINDOW_SHOW_MESSAGE_REQUEST)
    def message_request(params: T.ShowMessageRequestParams):
        client.message_requests.append(params)
        return T.MessageActionItem(title=client.answer)

    return client


CONFIG = InProcess(
    server_command=[DEEPACP, "lsp"],
    client_factory=make_client,
    server_env={**os.environ, "DEEPACP_HOME": HOME, "DEEPACP_MODEL": ""},
)


@pytest_lsp.fixture(params=CLIENTS, config=CONFIG)
async def client(request, lsp_client: LanguageClient):
    lsp_client.client_name = request.param
    yield
    await lsp_client.shutdown_session()


def apply_as_an_editor(client: LanguageClient, edit: T.WorkspaceEdit):
    """Apply `edit` to the client's documents as an editor does: refuse it whole when a
    text edit was made for another version of its document, else change (or open) each
    document and tell the server before answering."""
    per_file: list[tuple[str, int | None, list[T.TextEdit]]] = []
    for change in edit.document_changes or []:
        if isinstance(change, T.TextDocumentEdit):
            per_file.append((change.text_document.uri, change.text_document.version, change.edits))
    per_file += [(uri, None, edits) for uri, edits in (edit.changes or {}).items()]
    for uri, version, _ in per_file:
        if version is not None and uri in client.texts and client.texts[uri][1] != version:
            return T.ApplyWorkspaceEditResult(applied=False, failure_reason="version mismatch")
    for uri, _, edits in per_file:
        if uri in client.texts:
            text, version = client.texts[uri]
            change_document(client, uri, apply(text, edits), version + 1)
        else:
            path = Path(uri.removeprefix("file://"))
            text = path.read_text() if path.is_file() else ""
            open_document(client, path, apply(text, edits))
    return T.ApplyWorkspaceEditResult(applied=True)


async def start(client: LanguageClient, root: Path, turns: list[dict], **options) -> Path:
    """Initialize with a scripted model; returns the file where it records its requests."""
    script = root.parent / f"{root.name}-script.json"
    record = root.parent / f"{root.name}-requests.jsonl"
    script.write_text(json.dumps({"record": str(record), "turns": turns}))
    await client.initialize_session(
        T.InitializeParams(
            capabilities=client_capabilities(client.client_name),
            root_uri=root.as_uri(),
            initialization_options={"model": f"scripted:{script}", **options},
        )
    )
    return record


async def open_calc(
    client: LanguageClient, root: Path, turns: list[dict], text: str | None = None, **options
) -> str:
    """calc.py as DISK on disk and as `text` (default BUFFER) in the editor, the server
    started with a script of `turns`; returns the document's uri."""
    (root / "calc.py").write_text(DISK)
    await start(client, root, turns, **options)
    return open_document(client, root / "calc.py", BUFFER if text is None else text)


async def edit_calc(
    client: LanguageClient,
    root: Path,
    turns: list[dict],
    instruction: str,
    text: str | None = None,
    **options,
) -> tuple[str, dict]:
    """`open_calc`, then `deepacp.edit` with `instruction`: the uri and the edit's result."""
    uri = await open_calc(client, root, turns, text, **options)
    return uri, await execute(client, "deepacp.edit", {"uri": uri, "instruction": instruction})


async def until(condition, what: str) -> None:
    """Wait for what the server sends on its own time (diagnostics, messages)."""
    try:
        async with asyncio.timeout(20):  # a fresh server's first model call, under load
            while not condition():
                await asyncio.sleep(0.01)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


def hints(client: LanguageClient, uri: str) -> list[T.Diagnostic]:
    return [d for d in client.diagnostics.get(uri, []) if d.source == "deepacp"]


def said(client: LanguageClient, text: str) -> list[str]:
    return [m.message for m in client.messages if text in m.message]


def open_document(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    uri = path.as_uri()
    client.texts[uri] = [text, version]
    client.text_document_did_open(
        T.DidOpenTextDocumentParams(T.TextDocumentItem(uri, "python", version, text))
    )
    return uri


def change_document(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.texts[uri] = [text, version]
    client.text_document_did_change(
        T.DidChangeTextDocumentParams(
            T.VersionedTextDocumentIdentifier(version=version, uri=uri),
            [T.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


def apply(text: str, edits: list[T.TextEdit]) -> str:
    lines = text.splitlines(keepends=True)
    for edit in sorted(edits, key=lambda e: e.range.start.line, reverse=True):
        start, end = edit.range.start.line, edit.range.end.line
        lines[start:end] = [edit.new_text] if edit.new_text else []
    return "".join(lines)


def edits_for(edit: T.WorkspaceEdit, uri: str) -> list[T.TextEdit]:
    if edit.document_changes:
        return [
            e
            for change in edit.document_changes
            if isinstance(change, T.TextDocumentEdit) and change.text_document.uri == uri
            for e in change.edits
        ]
    return list((edit.changes or {}).get(uri, []))


async def execute(client: LanguageClient, command: str, *arguments):
    return await client.workspace_execute_command_async(
        T.ExecuteCommandParams(command=command, arguments=list(arguments))
    )


async def actions(client: LanguageClient, uri: str, line: int) -> dict[str, T.CodeAction]:
    found = await client.text_document_code_action_async(
        T.CodeActionParams(
            T.TextDocumentIdentifier(uri),
            T.Range(T.Position(line, 0), T.Position(line, 0)),
            T.CodeActionContext(diagnostics=[]),
        )
    )
    return {a.title: a for a in found or []}


EDIT_TWO_PLACES = [
    edit_call("e", "calc.py", "return a + b  # unsaved", "return a + b + 0"),
    edit_call("e2", "calc.py", "def sub(a, b):", "def subtract(a, b):", "Rename sub to subtract."),
    {"content": "Made add explicit and renamed sub to subtract."},
]

DISK = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
BUFFER = "def add(a, b):\n    return a + b  # unsaved\n\n\ndef sub(a, b):\n    return a - b\n"
TODO = "- test\n"


async def test_edit_of_an_unsaved_buffer_is_a_proposal_until_accepted(
    client: LanguageClient, tmp_path: Path
) -> None:
    uri, result = await edit_calc(client, tmp_path, EDIT_TWO_PLACES, "tidy the helpers")
    assert result["hunks"] == 2 and result["files"] == [uri]
    assert (tmp_path / "calc.py").read_text() == DISK  # nothing touched the disk
    [reports] = client.progress_reports.values()  # every client here declares workDoneProgress
    kinds = [r.kind for r in reports]
    assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds
    assert reports[0].cancellable is True
    await until(lambda: len(hints(client, uri)) == 2, "two hints")
    assert all(d.severity == T.DiagnosticSeverity.Hint for d in hints(client, uri))
    # Each hint says what its hunk does: the agent's word for it, else its first line.
    assert [d.message for d in hints(client, uri)] == [
        "deepacp proposes: return a + b + 0",
        "deepacp: Rename sub to subtract.",
    ]

    hover = await client.text_document_hover_async(
        T.HoverParams(T.TextDocumentIdentifier(uri), T.Position(1, 4))
    )
    assert "--- a/calc.py\n+++ b/calc.py\n@@ -2,1 +2,1 @@\n" in hover.contents.value
    assert "-    return a + b  # unsaved\n+    return a + b + 0" in hover.contents.value

    found = await actions(client, uri, 1)
    assert set(HUNK_ACTIONS) <= set(found)
    accept = found["deepacp: Accept this hunk"]
    text = apply(BUFFER, edits_for(accept.edit, uri))  # the editor applies the edit natively
    assert text.splitlines()[1] == "    return a + b + 0" and "def sub(a, b):" in text
    change_document(client, uri, text, 2)
    await execute(client, accept.command.command, *accept.command.arguments)
    await until(lambda: len(hints(client, uri)) == 1, "one hint left")

    found = await actions(client, uri, 4)
    rest = found["deepacp: Accept all in file"]
    text = apply(text, edits_for(rest.edit, uri))
    assert text.splitlines()[4] == "def subtract(a, b):"
    change_document(client, uri, text, 3)
    await execute(client, rest.command.command, *rest.command.arguments)
    await until(lambda: hints(client, uri) == [], "no hints left")
    assert (tmp_path / "calc.py").read_text() == DISK  # the editor saves, not deepacp


async def test_reject_and_stale_hunks_are_never_applied(
    client: LanguageClient, tmp_path: Path
) -> None:
    uri, result = await edit_calc(client, tmp_path, EDIT_TWO_PLACES, "tidy")
    proposal = result["proposal"]
    found = await actions(client, uri, 1)
    reject = found["deepacp: Reject hunk"]
    await execute(client, reject.command.command, *reject.command.arguments)
    # The user edits the text under the remaining hunk: it is stale now.
    edited = BUFFER.replace("def sub(a, b):", "def sub(a, b, c=0):")
    change_document(client, uri, edited, 2)
    await until(lambda: "stale" in "".join(d.message for d in hints(client, uri)), "stale")
    [stale] = hints(client, uri)
    assert stale.severity == T.DiagnosticSeverity.Warning
    hunk = stale.data["hunk"]
    outcome = await execute(client, "deepacp.acceptHunk", proposal, uri, hunk)
    assert outcome == {"applied": False, "reason": "stale"}
    assert all("Accept this hunk" not in title for title in await actions(client, uri, 4))
    # Accepting the proposal applies nothing and says what is left, and where.
    outcome = await execute(client, "deepacp.acceptProposal")
    assert outcome["applied"] is False
    assert outcome["left"] == [{"file": "calc.py", "line": 5, "reason": "stale"}]
    assert client.applied_edits == []
    assert said(client, "still pending") == [
        "deepacp: nothing accepted; still pending: calc.py line 5 "
        "(stale: the text under it changed since it was proposed)"
    ]
    await execute(client, "deepacp.rejectProposal", proposal)
    await until(lambda: hints(client, uri) == [], "no hints left")


NEW_FILE_AND_EDIT = [
    write_call("n", "notes/todo.md", TODO),
    edit_call("e", "calc.py", "a - b", "a - b  # ok"),
    {"content": "Added notes and a comment."},
]


async def test_a_new_file_is_never_written_by_the_server(
    client: LanguageClient, tmp_path: Path
) -> None:
    uri, result = await edit_calc(client, tmp_path, NEW_FILE_AND_EDIT, "annotate", text=DISK)
    assert len(result["files"]) == 2
    new_file = (tmp_path / "notes" / "todo.md").as_uri()
    await until(lambda: len(hints(client, new_file)) == 1, "a hint for the new file")
    assert hints(client, new_file)[0].message == "deepacp proposes: new file: - test"
    outcome = await execute(client, "deepacp.acceptProposal", result["proposal"])
    assert outcome["applied"] is True and outcome["left"] == []
    # One edit per file, so the editor's answer is about one file.
    [edited] = [a.edit for a in client.applied_edits if edits_for(a.edit, uri)]
    [created] = [a.edit for a in client.applied_edits if edits_for(a.edit, new_file)]
    assert len(client.applied_edits) == 2
    assert "a - b  # ok" in apply(DISK, edits_for(edited, uri))
    creates = [c for c in created.document_changes or [] if isinstance(c, T.CreateFile)]
    if client.client_name == "visual-studio-code":  # the editor creates it (file operations)
        assert [c.uri for c in creates] == [new_file]
        [insert] = edits_for(created, new_file)
        assert insert.range == T.Range(T.Position(0, 0), T.Position(0, 0))
        assert insert.new_text == TODO
    else:  # a text edit filling the editor's empty document for it (an unsaved buffer)
        assert creates == []
        [fill] = edits_for(created, new_file)
        assert fill.range == T.Range(T.Position(0, 0), T.Position(1, 0))
        assert apply("\n", [fill]) == TODO  # Neovim opens a missing file as one empty line
    assert not (tmp_path / "notes").exists()  # on no client does the server write it
    assert said(client, "not saved yet") == [
        "deepacp: accepted into the editor, not saved yet: calc.py, notes/todo.md (new)"
    ]


async def test_a_new_file_open_in_the_editor_is_filled_exactly(
    client: LanguageClient, tmp_path: Path
) -> None:
    _, result = await edit_calc(client, tmp_path, NEW_FILE_AND_EDIT, "annotate", text=DISK)
    # The user opens the new file before accepting: the editor holds one empty line.
    new_file = open_document(client, tmp_path / "notes" / "todo.md", "\n")
    for title in ("deepacp: Accept this hunk", "deepacp: Accept proposal"):
        action = (await actions(client, new_file, 0))[title]
        assert apply("\n", edits_for(action.edit, new_file)) == TODO  # no extra blank line
    # Text typed into it since makes the proposed file stale: it is not overwritten.
    change_document(client, new_file, "mine\n", 2)
    outcome = await execute(client, "deepacp.acceptFile", result["proposal"], new_file)
    assert outcome == {"applied": False, "reason": "stale"}


async def test_a_deletion_is_done_by_the_editor_or_left_to_the_user(
    client: LanguageClient, tmp_path: Path
) -> None:
    (tmp_path / "calc.py").write_text(DISK)
    (tmp_path / "old.py").write_text("OLD = 1\n")
    turns = [
        {"tool_calls": [{"id": "d", "name": "delete", "args": {"file_path": "old.py"}}]},
        {"content": "Removed old.py."},
    ]
    await start(client, tmp_path, turns)
    uri = open_document(client, tmp_path / "calc.py", DISK)
    result = await execute(client, "deepacp.edit", {"uri": uri, "instruction": "drop old.py"})
    outcome = await execute(client, "deepacp.acceptProposal", result["proposal"])
    assert (tmp_path / "old.py").exists()  # the server deletes nothing itself
    if client.client_name == "visual-studio-code":
        [applied] = client.applied_edits
        [delete] = applied.edit.document_changes
        assert isinstance(delete, T.DeleteFile) and delete.uri == (tmp_path / "old.py").as_uri()
    else:
        assert client.applied_edits == [] and outcome["left"][0]["reason"] == "delete"
        assert said(client, "still pending") == [
            "deepacp: nothing accepted; still pending: old.py "
            "(to delete: this editor cannot delete files for deepacp)"
        ]


async def test_review_in_editor_uses_annotations_where_declared(
    client: LanguageClient, tmp_path: Path
) -> None:
    uri, result = await edit_calc(client, tmp_path, EDIT_TWO_PLACES, "tidy")
    titles = set(await actions(client, uri, 1))
    if client.client_name != "visual-studio-code":
        assert "deepacp: Review in editor" not in titles
        return
    assert "deepacp: Review in editor" in titles
    await execute(client, "deepacp.review", result["proposal"])
    [applied] = client.applied_edits
    annotation = applied.edit.change_annotations["deepacp"]
    assert annotation.needs_confirmation is True and "subtract" in annotation.description
    edits = [e for c in applied.edit.document_changes for e in c.edits]
    assert all(isinstance(e, T.AnnotatedTextEdit) for e in edits) and len(edits) == 2


async def test_show_diff_opens_the_diff_or_shows_it_as_a_message(
    client: LanguageClient, tmp_path: Path
) -> None:
    _, result = await edit_calc(client, tmp_path, EDIT_TWO_PLACES, "tidy")
    client.messages.clear()
    shown = await execute(client, "deepacp.showDiff", result["proposal"])
    diff = Path(shown["path"]).read_text()
    assert diff.startswith("--- a/calc.py\n+++ b/calc.py\n") and "+def subtract(a, b):" in diff
    if client.client_name == "visual-studio-code":  # the one of these with showDocument
        assert shown["shown"] == "document"
        assert [d.uri for d in client.shown_documents] == [Path(shown["path"]).as_uri()]
    else:  # nothing to open it with (Neovim 0.7): the diff itself is the message
        assert shown["shown"] == "message" and client.shown_documents == []
        message = f"deepacp: proposal {result['proposal']}\n{diff}"
        assert said(client, "+def subtract(a, b):") == [message]


async def test_cancel_keeps_the_edits_made_so_far_as_a_partial_proposal(
    client: LanguageClient, tmp_path: Path
) -> None:
    (tmp_path / "calc.py").write_text(DISK)
    turns = [
        edit_call("e", "calc.py", "a - b", "a - b  # checked", "Comment the subtraction."),
        {"content": "thinking " * 300, "delay_ms": 20},
    ]
    record = await start(client, tmp_path, turns)
    uri = open_document(client, tmp_path / "calc.py", DISK)
    running = asyncio.create_task(
        execute(client, "deepacp.edit", {"uri": uri, "instruction": "slow"})
    )

    def second_model_call() -> bool:  # the edit is done: the model is asked again
        return record.exists() and len(record.read_text().splitlines()) >= 2

    await until(second_model_call, "the second model call")
    await execute(client, "deepacp.cancel")
    result = await running
    assert result["cancelled"] is True and result["partial"] is True and result["hunks"] == 1
    assert "thinking " * 300 not in result["summary"]  # the run was cut short
    await until(lambda: len(hints(client, uri)) == 1, "the kept hunk's hint")
    assert hints(client, uri)[0].message == (
        "deepacp (partial: the run was cancelled): Comment the subtraction."
    )
    assert said(client, "cancelled") == [
        "deepacp: cancelled; the 1 change made before that are kept as a partial proposal "
        "in calc.py"
    ]
    accept = (await actions(client, uri, 5))["deepacp: Accept this hunk"]
    assert apply(DISK, edits_for(accept.edit, uri)).endswith("return a - b  # checked\n")


async def test_cancel_before_any_edit_says_so(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(DISK)
    record = await start(client, tmp_path, [{"content": "thinking " * 300, "delay_ms": 20}])
    uri = open_document(client, tmp_path / "calc.py", DISK)
    running = asyncio.create_task(
        execute(client, "deepacp.edit", {"uri": uri, "instruction": "slow"})
    )
    await until(record.exists, "the model call")
    await execute(client, "deepacp.cancel")
    result = await running
    assert result["cancelled"] is True and result["proposal"] is None
    assert said(client, "cancelled") == ["deepacp: cancelled before anything was proposed"]


async def test_bad_requests_are_refused_in_plain_words_before_the_model_runs(
    client: LanguageClient, tmp_path: Path
) -> None:
    workspace = tmp_path / "project"
    workspace.mkdir()
    (workspace / "calc.py").write_text(DISK)
    (tmp_path / "elsewhere.py").write_text(DISK)
    record = await start(client, workspace, [{"content": "must not be asked"}])
    uri = open_document(client, workspace / "calc.py", DISK)
    refused = {
        "outside": [{"uri": (tmp_path / "elsewhere.py").as_uri(), "instruction": "tidy"}],
        "missing": [{"uri": (workspace / "gone.py").as_uri(), "instruction": "tidy"}],
        "empty": [{"uri": uri, "instruction": ""}],
        "number": [{"uri": uri, "instruction": 7}],
        "bare number": [7],
        "no uri": [{"instruction": "tidy"}],
        "bad range": [{"uri": uri, "instruction": "tidy", "range": {"start": 1}}],
        "unknown field": [{"uri": uri, "instruction": "tidy", "file": "calc.py"}],
        "blank words": ["  "],
    }
    errors = {}
    for name, arguments in refused.items():
        with pytest.raises(Exception) as caught:
            await execute(client, "deepacp.edit", *arguments)
        errors[name] = str(caught.value)
    assert f"{tmp_path / 'elsewhere.py'} is outside the workspace {workspace}" in errors["outside"]
    assert f"{workspace / 'gone.py'} does not exist" in errors["missing"]
    assert f"(workspace {workspace})" in errors["missing"]
    assert "the instruction is empty" in errors["empty"] and "empty" in errors["blank words"]
    assert "'instruction' must be text saying what to change, not a number" in errors["number"]
    assert "got a number" in errors["bare number"]
    assert "'uri' is missing" in errors["no uri"]
    assert "'range' must be {start: {line, character}" in errors["bad range"]
    assert "unknown field 'file'" in errors["unknown field"]
    for message in errors.values():
        assert "ValueError" not in message and "structuring" not in message
    assert not record.exists()  # not one model call
    # The server is still up and serves a good request.
    result = await execute(client, "deepacp.edit", {"uri": uri, "instruction": "say hi"})
    assert result["proposal"] is None and len(record.read_text().splitlines()) == 1


async def test_a_model_that_cannot_be_used_is_reported_in_plain_words(
    client: LanguageClient, tmp_path: Path
) -> None:
    uri = await open_calc(client, tmp_path, [], text=DISK, model="nope:model")
    with pytest.raises(
        Exception, match=r"model 'nope:model': Unsupported provider='nope'\."
    ) as caught:
        await execute(client, "deepacp.edit", {"uri": uri, "instruction": "tidy"})
    assert "Error:" not in str(caught.value)  # no exception class in front of it


async def test_no_change_is_announced_once(client: LanguageClient, tmp_path: Path) -> None:
    nothing = [{"content": "Nothing to change here."}]
    _, result = await edit_calc(client, tmp_path, nothing, "tidy", text=DISK)
    assert result["proposal"] is None and result["summary"] == "Nothing to change here."
    assert said(client, "Nothing to change") == [
        "deepacp: no change proposed: Nothing to change here."
    ]


async def test_shell_commands_ask_through_show_message_request(
    client: LanguageClient, tmp_path: Path
) -> None:
    (tmp_path / "calc.py").write_text(DISK)
    turns = [
        {"tool_calls": [{"id": "x", "name": "execute", "args": {"command": "touch ran.txt"}}]},
        {"content": "ran"},
        {"tool_calls": [{"id": "y", "name": "execute", "args": {"command": "touch denied.txt"}}]},
        {"content": "denied"},
    ]
    await start(client, tmp_path, turns)
    uri = open_document(client, tmp_path / "calc.py", DISK)
    await execute(client, "deepacp.edit", {"uri": uri, "instruction": "run it"})
    if client.capabilities.window.show_message is None:  # Emacs: nobody to ask, so denied
        assert client.message_requests == [] and not (tmp_path / "ran.txt").exists()
        return
    [asked] = client.message_requests
    assert "touch ran.txt" in asked.message
    assert [a.title for a in asked.actions] == ["Allow once", "Always for this session", "Deny"]
    # It ran: in a read-only sandbox where there is one (the disk waits for the review).
    assert (tmp_path / "ran.txt").exists() is (sandbox_problem() is not None)
    client.answer = "Deny"
    await execute(client, "deepacp.edit", {"uri": uri, "instruction": "run again"})
    assert not (tmp_path / "denied.txt").exists()


@pytest.mark.skipif(sandbox_problem() is not None, reason="no sandbox to run outside of")
async def test_running_outside_the_sandbox_is_asked_even_when_shell_is_allow(
    client: LanguageClient, tmp_path: Path
) -> None:
    (tmp_path / "calc.py").write_text(DISK)
    outside = Path(tempfile.mkdtemp(prefix="deepacp-outside-", dir="/var/tmp"))
    escape = f"touch {outside}/out.txt"
    args = {"command": escape, "outside_sandbox": True}
    turns = [{"tool_calls": [{"id": "x", "name": "execute", "args": args}]}, {"content": "ok"}]
    await start(client, tmp_path, turns, shell="allow")
    client.answer = "Deny"
    uri = open_document(client, tmp_path / "calc.py", DISK)
    await execute(client, "deepacp.edit", {"uri": uri, "instruction": "run it outside"})
    ran = (outside / "out.txt").exists()
    shutil.rmtree(outside)
    assert not ran  # shell = "allow" does not answer for the user
    if client.capabilities.window.show_message is None:  # Emacs: nobody to ask, so denied
        assert client.message_requests == []
        return
    [asked] = client.message_requests
    assert f"Run outside the sandbox: {escape}" in asked.message
    assert [a.title for a in asked.actions] == ["Allow once", "Deny"]


async def test_instruction_comments_and_diagnostics_offer_edits(
    client: LanguageClient, tmp_path: Path
) -> None:
    await start(client, tmp_path, [])
    text = "import os\n# deepacp: make this function async\ndef load():\n    return 1\n"
    uri = open_document(client, tmp_path / "load.py", text)
    found = await actions(client, uri, 1)
    action = found["deepacp: make this function async"]
    assert action.command.command == "deepacp.edit"
    assert action.command.arguments[0]["instruction"] == "make this function async"
    problem = T.Diagnostic(
        T.Range(T.Position(0, 0), T.Position(0, 9)), "'os' imported but unused", source="ruff"
    )
    fixes = await client.text_document_code_action_async(
        T.CodeActionParams(
            T.TextDocumentIdentifier(uri), problem.range, T.CodeActionContext(diagnostics=[problem])
        )
    )
    [fix] = [a for a in fixes if a.title == "deepacp: fix this"]
    assert fix.command.arguments[0]["instruction"] == "Fix this problem: 'os' imported but unused"


async def linted(
    client: LanguageClient, path: Path, text: str, what: str
) -> tuple[str, list[T.Diagnostic]]:
    """Open `path` holding `text` and wait for its lint (`what` names it if none comes)."""
    uri = open_document(client, path, text)
    await until(lambda: client.diagnostics.get(uri), what)
    return uri, list(client.diagnostics[uri])


async def test_skill_files_get_lint_as_you_type(client: LanguageClient, tmp_path: Path) -> None:
    await start(client, tmp_path, [])
    folder = tmp_path / "skills" / "release-notes"
    folder.mkdir(parents=True)
    skill = "---\nname: Release_Notes\ndescription: Draft notes.\n---\n"
    uri, [problem] = await linted(client, folder / "SKILL.md", skill, "the skill's lint")
    assert "lowercase" in problem.message and problem.range.start.line == 1
    change_document(client, uri, "---\nname: release-notes\ndescription: Draft notes.\n---\n", 2)
    await until(lambda: list(client.diagnostics[uri]) == [], "the lint to clear")
    memory = "Use ruff.\nANTHROPIC_API_KEY = sk-ant-abcdefghijklmnopqrstuv\n"
    _, [secret] = await linted(client, tmp_path / "AGENTS.md", memory, "the memory file's lint")
    assert secret.range.start.line == 1 and "secret" in secret.message


async def test_code_lenses_are_opt_in(client: LanguageClient, tmp_path: Path) -> None:
    uri, result = await edit_calc(client, tmp_path, EDIT_TWO_PLACES, "tidy", review="lens")
    lenses = await client.text_document_code_lens_async(
        T.CodeLensParams(T.TextDocumentIdentifier(uri))
    )
    if not client.capabilities.text_document.code_lens:
        assert not lenses
        return
    assert [lens.command.title for lens in lenses] == ["Accept", "Discard", "Accept", "Discard"]
    accept = lenses[0].command
    outcome = await execute(client, accept.command, *accept.arguments)
    assert outcome["applied"] is True and result["proposal"] == accept.arguments[0]


async def test_an_instruction_typed_at_a_prompt_is_about_the_last_document(
    client: LanguageClient, tmp_path: Path
) -> None:
    # Helix: `:lsp-workspace-command deepacp.edit "tidy the helpers"` sends one string.
    (tmp_path / "calc.py").write_text(DISK)
    await start(client, tmp_path, EDIT_TWO_PLACES)
    with pytest.raises(Exception, match="open the file"):
        await execute(client, "deepacp.edit", "tidy the helpers")
    uri = open_document(client, tmp_path / "calc.py", BUFFER)
    result = await execute(client, "deepacp.edit", "tidy", "the", "helpers")
    assert result["files"] == [uri] and result["hunks"] == 2


async def test_an_edit_leaves_no_session_behind(client: LanguageClient, tmp_path: Path) -> None:
    """Inline edits are ephemeral: nothing in the session list an agent panel shows."""
    import sqlite3

    _, result = await edit_calc(client, tmp_path, EDIT_TWO_PLACES, "tidy the helpers")
    assert result["hunks"] == 2
    home = Path(HOME)
    if (home / "sessions.db").exists():
        with sqlite3.connect(home / "sessions.db") as db:
            assert db.execute("SELECT id FROM sessions").fetchall() == []
    assert list((home / "scratch").glob("*")) == []
