"""The client tiers the review is shaped for, from capabilities recorded from real editors
(pytest-lsp's snapshots), and an editor's way of applying a workspace edit's text edits."""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types as T
from pytest_lsp import client_capabilities

from deepacp.lsp.capabilities import ClientSupport, Tier, client_support, review_tiers


@dataclass(frozen=True)
class Client:
    name: str
    support: ClientSupport
    tiers: set[Tier]


def recorded(name: str, snapshot: str, info: T.ClientInfo | None = None) -> Client:
    support = client_support(client_capabilities(snapshot), info)
    return Client(name, support, review_tiers(support))


VSCODE = recorded("vscode", "visual-studio-code")
"""documentChanges with file operations and change annotations."""
NEOVIM = recorded("neovim", "neovim@v0.7.0", T.ClientInfo("Neovim", "0.7.2"))
"""Declares neither documentChanges nor annotations, but applies versioned text edits."""
EMACS = recorded("emacs", "emacs")
"""documentChanges without file operations or annotations (Helix declares the same)."""
CLIENTS = [VSCODE, NEOVIM, EMACS]


Edit = T.TextEdit | T.AnnotatedTextEdit


def apply(text: str, edits: list[Edit]) -> str:
    """Apply edits as an editor does, clamping a position past the end of its line or of
    the document (characters count as code points: these texts are ASCII)."""
    lines = text.splitlines(keepends=True)

    def offset(position: T.Position) -> int:
        if position.line >= len(lines):
            return len(text)
        line = lines[position.line]
        before = sum(len(x) for x in lines[: position.line])
        return before + min(position.character, len(line.rstrip("\r\n")))

    ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))
    for edit in reversed(ordered):  # from the end: the earlier positions still hold
        start, end = offset(edit.range.start), offset(edit.range.end)
        text = text[:start] + edit.new_text + text[end:]
    return text


def edits_for(edit: T.WorkspaceEdit, uri: str) -> list[Edit]:
    """The text edits `edit` makes to `uri`, however the edit is shaped."""
    if edit.document_changes is not None:
        return [
            e
            for change in edit.document_changes
            if isinstance(change, T.TextDocumentEdit) and change.text_document.uri == uri
            for e in change.edits
        ]
    return list((edit.changes or {}).get(uri, []))


def operations(edit: T.WorkspaceEdit) -> list[str]:
    """The kinds of change in `edit`, in order ("edit" for plain changes)."""
    if edit.document_changes is None:
        return ["edit" for _ in edit.changes or {}]
    return [type(c).__name__ for c in edit.document_changes]
