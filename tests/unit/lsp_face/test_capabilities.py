"""What each client tier can do, read from its declared capabilities, and the review
surfaces that follow."""

import pytest
from lsprotocol import types as T

from deepacp.lsp.capabilities import ClientSupport, client_support, review_tiers
from tests.unit.lsp_face.clients import EMACS, NEOVIM, VSCODE


def test_the_recorded_clients_fall_into_the_three_tiers() -> None:
    declared = (
        "document_changes versioned_edits create_files delete_files annotations show_document "
        "show_message_request progress code_lens"
    )
    assert VSCODE.support == ClientSupport(**dict.fromkeys(declared.split(), True))
    assert (NEOVIM.support.document_changes, NEOVIM.support.annotations) == (False, False)
    assert NEOVIM.support.versioned_edits is EMACS.support.versioned_edits is True
    assert (NEOVIM.support.show_document, NEOVIM.support.show_message_request) == (False, True)
    assert (EMACS.support.document_changes, EMACS.support.annotations) == (True, False)
    assert (EMACS.support.create_files, EMACS.support.delete_files) == (False, False)
    assert EMACS.support.show_message_request is False  # nobody to ask: shell commands denied


def test_a_client_that_declares_nothing_supports_nothing() -> None:
    assert client_support(T.ClientCapabilities()) == ClientSupport()
    declared = {k: v for k, v in vars(ClientSupport()).items() if k != "position_encoding"}
    assert not any(declared.values())
    assert ClientSupport().position_encoding == T.PositionEncodingKind.Utf16  # LSP's default


def test_positions_count_in_the_encoding_the_client_prefers() -> None:
    general = T.GeneralClientCapabilities(
        position_encodings=[T.PositionEncodingKind.Utf8, T.PositionEncodingKind.Utf16]
    )  # what Neovim 0.10 and later declare
    support = client_support(T.ClientCapabilities(general=general))
    assert support.position_encoding == T.PositionEncodingKind.Utf8


def test_annotations_count_only_with_document_changes() -> None:
    edit = T.WorkspaceEditClientCapabilities(
        change_annotation_support=T.ChangeAnnotationsSupportOptions(groups_on_label=True)
    )
    support = client_support(
        T.ClientCapabilities(workspace=T.WorkspaceClientCapabilities(workspace_edit=edit))
    )
    assert support.annotations is False  # annotated edits travel only in documentChanges
    edit.document_changes = True
    support = client_support(
        T.ClientCapabilities(workspace=T.WorkspaceClientCapabilities(workspace_edit=edit))
    )
    assert support.annotations is True


@pytest.mark.parametrize(
    ("preference", "vscode", "others"),
    [
        ("auto", {"diagnostics", "annotated"}, {"diagnostics"}),
        ("annotated", {"diagnostics", "annotated"}, {"diagnostics"}),
        ("diagnostics", {"diagnostics"}, {"diagnostics"}),
        ("lens", {"diagnostics", "lens"}, {"diagnostics"}),  # only VS Code declares code lenses
    ],
)
def test_review_surfaces_follow_the_client_and_the_users_preference(
    preference: str, vscode: set[str], others: set[str]
) -> None:
    assert review_tiers(VSCODE.support, preference) == vscode
    assert review_tiers(NEOVIM.support, preference) == others
    assert review_tiers(EMACS.support, preference) == others
