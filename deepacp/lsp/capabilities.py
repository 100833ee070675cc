"""What the client can do, from its declared capabilities, and the review surfaces that follow."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lsprotocol import types as T
from pygls.capabilities import ServerCapabilitiesBuilder

Tier = Literal["diagnostics", "annotated", "lens"]


@dataclass(frozen=True)
class ClientSupport:
    """What the client declared; `ClientSupport()` is a client that declared nothing."""

    document_changes: bool = False
    versioned_edits: bool = False
    """Text edits can name the document version they were made for, and the editor refuses
    them when its buffer is newer (`documentChanges` of `TextDocumentEdit`s)."""
    create_files: bool = False
    delete_files: bool = False
    annotations: bool = False
    show_document: bool = False
    show_message_request: bool = False
    progress: bool = False
    code_lens: bool = False
    position_encoding: str = T.PositionEncodingKind.Utf16
    """How a position's character counts, as pygls agreed it with the client."""


APPLIES_VERSIONED_EDITS = ("Neovim",)
"""Clients that apply `documentChanges` text edits (and drop one older than the buffer)
though they do not declare it: Neovim 0.5 to 0.11."""


def client_support(caps: T.ClientCapabilities, client: T.ClientInfo | None = None) -> ClientSupport:
    workspace = caps.workspace
    edit = workspace.workspace_edit if workspace else None
    operations = set(edit.resource_operations or []) if edit else set()
    window = caps.window
    document = caps.text_document
    return ClientSupport(
        document_changes=bool(edit and edit.document_changes),
        versioned_edits=bool(edit and edit.document_changes)
        or (client is not None and client.name in APPLIES_VERSIONED_EDITS),
        create_files=T.ResourceOperationKind.Create in operations,
        delete_files=T.ResourceOperationKind.Delete in operations,
        annotations=bool(edit and edit.change_annotation_support and edit.document_changes),
        show_document=bool(window and window.show_document and window.show_document.support),
        show_message_request=bool(window and window.show_message),
        progress=bool(window and window.work_done_progress),
        code_lens=bool(document and document.code_lens),
        position_encoding=ServerCapabilitiesBuilder.choose_position_encoding(caps),
    )


def review_tiers(support: ClientSupport, preference: str = "auto") -> set[Tier]:
    """Which review surfaces to offer. Diagnostics and code actions always work."""
    tiers: set[Tier] = {"diagnostics"}
    if support.annotations and preference in ("auto", "annotated"):
        tiers.add("annotated")
    if support.code_lens and preference == "lens":
        tiers.add("lens")
    return tiers
