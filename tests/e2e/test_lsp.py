"""`deepacp lsp` over stdio with pytest-lsp, as VS Code and Neovim would drive it."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Union

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

DEEPACP = str(Path(sys.executable).parent / "deepacp")
HOME = tempfile.mkdtemp(prefix="deepacp-lsp-home-")
CLIENTS = ["visual-studio-code", "neovim"]


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

    @client.feature(T.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: T.ApplyWorkspaceEditParams):
        client.applied_edits.append(params)
        return T.ApplyWorkspaceEditResult(applied=True)

    @client.feature(T.WINDOW_SHOW_MESSAGE_REQUEST)
    def message_request(params: T.ShowMessageRequestParams):
        client.message_requests.append(params)
        return T.MessageActionItem(title=client.answer)

    return client


@pytest_lsp.fixture(
    params=CLIENTS,
    config=ClientServerConfig(
        server_command=[DEEPACP, "lsp"],
        client_factory=make_client,
        server_env={**os.environ, "DEEPACP_HOME": HOME, "DEEPACP_MODEL": ""},
    ),
)
async def client(request, lsp_client: LanguageClient):
    lsp_client.client_name = request.param
    yield
    await lsp_client.shutdown_session()


async def start(client: LanguageClient, root: Path, turns: list[dict], **options) -> None:
    script = root.parent / f"{root.name}-script.json"
    script.write_text(json.dumps({"turns": turns}))
    await client.initialize_session(
        T.InitializeParams(
            capabilities=client_capabilities(client.client_name),
            root_uri=root.as_uri(),
            initialization_options={"model": f"scripted:{script}", **options},
        )
    )


def open_document(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        T.DidOpenTextDocumentParams(T.TextDocumentItem(uri, "python", version, text))
    )
    return uri


def change_document(client: LanguageClient, uri: str, text: str, version: int) -> None:
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
    {
        "tool_calls": [
            {
                "id": "e",
                "name": "edit_file",
                "args": {
                    "file_path": "calc.py",
                    "old_string": "return a + b  # unsaved",
                    "new_string": "return a + b + 0",
                },
            }
        ]
    },
    {
        "tool_calls": [
            {
                "id": "e2",
                "name": "edit_file",
                "args": {
                    "file_path": "calc.py",
                    "old_string": "def sub(a, b):",
                    "new_string": "def subtract(a, b):",
                },
            }
        ]
    },
    {"content": "Made add explicit and renamed sub to subtract."},
]

DISK = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
BUFFER = "def add(a, b):\n    return a + b  # unsaved\n\n\ndef sub(a, b):\n    return a - b\n"


async def test_edit_of_an_unsaved_buffer_is_a_proposal_until_accepted(
    client: LanguageClient, tmp_path: Path
) -> None:
    (tmp_path / "calc.py").write_text(DISK)
    await start(client, tmp_path, EDIT_TWO_PLACES)
    uri = open_document(client, tmp_path / "calc.py", BUFFER)
    result = await execute(client, "deepacp.edit", {"uri": uri, "instruction": "tidy the helpers"})
    assert result["hunks"] == 2 and result["files"] == [uri]
    assert (tmp_path / "calc.py").read_text() == DISK  # nothing touched the disk
    [reports] = client.progress_reports.values()  # both clients declare workDoneProgress
    kinds = [r.kind for r in reports]
    assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds
    assert reports[0].cancellable is True
    await asyncio.sleep(0.1)
    hints = [d for d in client.diagnostics[uri] if d.source == "deepacp"]
    assert len(hints) == 2 and all(d.severity == T.DiagnosticSeverity.Hint for d in hints)
    assert "renamed sub to subtract" in hints[0].message

    hover = await client.text_document_hover_async(
        T.HoverParams(T.TextDocumentIdentifier(uri), T.Position(1, 4))
    )
    assert (
        "-    return a + b  # unsaved" in hover.contents.value
        and "+    return a + b + 0" in hover.contents.value
    )

    found = await actions(client, uri, 1)
    assert {
        "deepacp: Accept this hunk",
        "deepacp: Reject hunk",
        "deepacp: Accept all in file",
        "deepacp: Accept proposal",
        "deepacp: Reject proposal",
        "deepacp: Show diff",
    } <= set(found)
    accept = found["deepacp: Accept this hunk"]
    text = apply(BUFFER, edits_for(accept.edit, uri))  # the editor applies the edit natively
    assert text.splitlines()[1] == "    return a + b + 0" and "def sub(a, b):" in text
    change_document(client, uri, text, 2)
    await execute(client, accept.command.command, *accept.command.arguments)
    await asyncio.sleep(0.1)
    assert len([d for d in client.diagnostics[uri] if d.source == "deepacp"]) == 1

    found = await actions(client, uri, 4)
    rest = found["deepacp: Accept all in file"]
    text = apply(text, edits_for(rest.edit, uri))
    assert text.splitlines()[4] == "def subtract(a, b):"
    change_document(client, uri, text, 3)
    await execute(client, rest.command.command, *rest.command.arguments)
    await asyncio.sleep(0.1)
    assert [d for d in client.diagnostics[uri] if d.source == "deepacp"] == []
    assert (tmp_path / "calc.py").read_text() == DISK  # the editor saves, not deepacp

    diff = await execute(client, "deepacp.showDiff", result["proposal"])
    assert "+def subtract(a, b):" in Path(diff["path"]).read_text()


async def test_reject_and_stale_hunks_are_never_applied(
    client: LanguageClient, tmp_path: Path
) -> None:
    (tmp_path / "calc.py").write_text(DISK)
    await start(client, tmp_path, EDIT_TWO_PLACES)
    uri = open_document(client, tmp_path / "calc.py", BUFFER)
    result = await execute(client, "deepacp.edit", {"uri": uri, "instruction": "tidy"})
    proposal = result["proposal"]
    found = await actions(client, uri, 1)
    reject = found["deepacp: Reject hunk"]
    await execute(client, reject.command.command, *reject.command.arguments)
    # The user edits the text under the remaining hunk: it is stale now.
    edited = BUFFER.replace("def sub(a, b):", "def sub(a, b, c=0):")
    change_document(client, uri, edited, 2)
    await asyncio.sleep(0.1)
    [stale] = [d for d in client.diagnostics[uri] if d.source == "deepacp"]
    assert "stale" in stale.message and stale.severity == T.DiagnosticSeverity.Warning
    hunk = stale.data["hunk"]
    outcome = await execute(client, "deepacp.acceptHunk", proposal, uri, hunk)
    assert outcome == {"applied": False, "reason": "stale"}
    assert client.applied_edits == []
    assert all("Accept this hunk" not in title for title in await actions(client, uri, 4))
    await execute(client, "deepacp.rejectProposal", proposal)
    await asyncio.sleep(0.1)
    assert [d for d in client.diagnostics[uri] if d.source == "deepacp"] == []


async def test_accept_proposal_from_the_server(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(DISK)
    turns = [
        {
            "tool_calls": [
                {
                    "id": "n",
                    "name": "write_file",
                    "args": {"file_path": "notes/todo.md", "content": "- test\n"},
                }
            ]
        },
        {
            "tool_calls": [
                {
                    "id": "e",
                    "name": "edit_file",
                    "args": {
                        "file_path": "calc.py",
                        "old_string": "a - b",
                        "new_string": "a - b  # ok",
                    },
                }
            ]
        },
        {"content": "Added notes and a comment."},
    ]
    await start(client, tmp_path, turns)
    uri = open_document(client, tmp_path / "calc.py", DISK)
    result = await execute(client, "deepacp.edit", {"uri": uri, "instruction": "annotate"})
    assert len(result["files"]) == 2
    assert not (tmp_path / "notes").exists()
    outcome = await execute(client, "deepacp.acceptProposal", result["proposal"])
    assert outcome["applied"] is True
    [applied] = client.applied_edits
    assert "a - b  # ok" in apply(DISK, edits_for(applied.edit, uri))
    new_file = (tmp_path / "notes" / "todo.md").as_uri()
    if applied.edit.document_changes:  # the editor creates the file (VS Code)
        creates = [c for c in applied.edit.document_changes if isinstance(c, T.CreateFile)]
        assert [c.uri for c in creates] == [new_file]
        assert not (tmp_path / "notes").exists()
    else:  # no file operations in this client: deepacp writes it once accepted (Neovim)
        assert (tmp_path / "notes" / "todo.md").read_text() == "- test\n"


async def test_review_in_editor_uses_annotations_where_declared(
    client: LanguageClient, tmp_path: Path
) -> None:
    (tmp_path / "calc.py").write_text(DISK)
    await start(client, tmp_path, EDIT_TWO_PLACES)
    uri = open_document(client, tmp_path / "calc.py", BUFFER)
    result = await execute(client, "deepacp.edit", {"uri": uri, "instruction": "tidy"})
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


async def test_cancel_stops_a_running_edit_quickly(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(DISK)
    await start(client, tmp_path, [{"content": "thinking " * 300, "delay_ms": 20}])
    uri = open_document(client, tmp_path / "calc.py", DISK)
    running = asyncio.create_task(
        execute(client, "deepacp.edit", {"uri": uri, "instruction": "slow"})
    )
    await asyncio.sleep(1.0)
    started = time.monotonic()
    await execute(client, "deepacp.cancel")
    result = await running
    assert result["cancelled"] is True
    assert time.monotonic() - started < 1.0  # promptly; benchmarks/lsp_latency.py measures it


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
    [asked] = client.message_requests
    assert "touch ran.txt" in asked.message
    assert [a.title for a in asked.actions] == ["Allow once", "Always for this session", "Deny"]
    assert (tmp_path / "ran.txt").exists()
    client.answer = "Deny"
    await execute(client, "deepacp.edit", {"uri": uri, "instruction": "run again"})
    assert not (tmp_path / "denied.txt").exists()


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


async def test_skill_files_get_lint_as_you_type(client: LanguageClient, tmp_path: Path) -> None:
    await start(client, tmp_path, [])
    folder = tmp_path / "skills" / "release-notes"
    folder.mkdir(parents=True)
    uri = open_document(
        client,
        folder / "SKILL.md",
        "---\nname: Release_Notes\ndescription: Draft notes.\n---\n",
    )
    await asyncio.sleep(0.2)
    [problem] = client.diagnostics[uri]
    assert "lowercase" in problem.message and problem.range.start.line == 1
    change_document(client, uri, "---\nname: release-notes\ndescription: Draft notes.\n---\n", 2)
    await asyncio.sleep(0.2)
    assert list(client.diagnostics[uri]) == []
    memory = open_document(
        client,
        tmp_path / "AGENTS.md",
        "Use ruff.\nANTHROPIC_API_KEY = sk-ant-abcdefghijklmnopqrstuv\n",
    )
    await asyncio.sleep(0.2)
    [secret] = client.diagnostics[memory]
    assert secret.range.start.line == 1 and "secret" in secret.message


async def test_code_lenses_are_opt_in(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text(DISK)
    await start(client, tmp_path, EDIT_TWO_PLACES, review="lens")
    uri = open_document(client, tmp_path / "calc.py", BUFFER)
    result = await execute(client, "deepacp.edit", {"uri": uri, "instruction": "tidy"})
    lenses = await client.text_document_code_lens_async(
        T.CodeLensParams(T.TextDocumentIdentifier(uri))
    )
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
    with pytest.raises(Exception, match="takes"):
        await execute(client, "deepacp.edit", {"instruction": "no uri"})
    uri = open_document(client, tmp_path / "calc.py", BUFFER)
    result = await execute(client, "deepacp.edit", "tidy", "the", "helpers")
    assert result["files"] == [uri] and result["hunks"] == 2
