"""Workspace edits per client tier: nothing is left for the server to write, a new file
fills the editor's empty document exactly, a deletion needs the client's DeleteFile."""

from dataclasses import replace

from lsprotocol import types as T

from deepacp.lsp.capabilities import ClientSupport
from deepacp.lsp.edits import file_edit, outstanding, proposal_edits, whole_range, workspace_edit
from deepacp.lsp.proposal import make_proposal
from tests.unit.lsp_face.clients import EMACS, NEOVIM, VSCODE, apply

OLD = "a\nb\nc\n"
NEW_FILE = "- one\n- two\n"


def proposal():
    return make_proposal(
        "p1",
        {
            "file:///w/a.py": ("/w/a.py", OLD, "a\nB\nc\nd\n"),
            "file:///w/new.md": ("/w/new.md", None, NEW_FILE),
            "file:///w/gone.py": ("/w/gone.py", "x\n", None),
        },
    )


DOCUMENTS = {
    "file:///w/a.py": (OLD, 3),
    "file:///w/new.md": (None, None),
    "file:///w/gone.py": ("x\n", None),
}


def test_whole_range_covers_the_document_the_editor_holds() -> None:
    assert whole_range("") == T.Range(T.Position(0, 0), T.Position(0, 0))
    assert whole_range("\n") == T.Range(T.Position(0, 0), T.Position(1, 0))
    assert whole_range("ab\ncé") == T.Range(T.Position(0, 0), T.Position(1, 2))
    assert whole_range(None) == T.Range(T.Position(0, 0), T.Position(1, 0))


PLAIN = ClientSupport()
"""A client that declares nothing: plain `changes`."""


def test_lines_added_after_the_last_line_are_inserted_at_its_end() -> None:
    old = "x = 'é'\n"
    new = old + "y = 2\nz = 3\n"
    change = make_proposal("p", {"u": ("/w/f.py", old, new)}).files["u"]
    for encoding, column in (("utf-16", 7), ("utf-8", 8), ("utf-32", 7)):
        support = replace(NEOVIM.support, position_encoding=encoding)
        [edit] = file_edit(change, old, 1, support).edits
        end = T.Position(0, column)  # the end of the last line, never a line past it
        assert edit == T.TextEdit(T.Range(end, end), "\ny = 2\nz = 3")
    assert apply(old, [edit]) == new
    crlf = "a\r\n"
    change = make_proposal("p", {"u": ("/w/f.py", crlf, crlf + "b\r\n")}).files["u"]
    [edit] = file_edit(change, crlf, 1, NEOVIM.support).edits
    assert edit.new_text == "\r\nb" and apply(crlf, [edit]) == "a\r\nb\r\n"


def test_without_document_changes_a_new_file_is_a_text_edit_filling_its_empty_buffer() -> None:
    parts = proposal_edits(proposal(), DOCUMENTS, PLAIN)
    edit = workspace_edit(parts, PLAIN)
    assert edit.document_changes is None
    assert apply("\n", edit.changes["file:///w/new.md"]) == NEW_FILE
    assert apply(OLD, edit.changes["file:///w/a.py"]) == "a\nB\nc\nd\n"
    assert "file:///w/gone.py" not in edit.changes  # no way to delete: left to the user
    left = {x.uri: x.reason for x in outstanding(proposal(), DOCUMENTS, PLAIN)}
    assert left["file:///w/gone.py"] == "delete" and left["file:///w/new.md"] == "pending"


def test_neovim_gets_versioned_text_edits_and_no_file_operations() -> None:
    """Neovim declares no documentChanges but applies them, and drops a text edit made for
    an older version of its buffer: an accept that comes late is refused, not applied twice."""
    edit = workspace_edit(proposal_edits(proposal(), DOCUMENTS, NEOVIM.support), NEOVIM.support)
    assert [type(c).__name__ for c in edit.document_changes] == [
        "TextDocumentEdit",
        "TextDocumentEdit",
    ]
    assert [c.text_document.version for c in edit.document_changes] == [3, None]
    [fill] = edit.document_changes[1].edits
    assert apply("\n", [fill]) == NEW_FILE


def test_an_edit_knows_the_text_it_leaves() -> None:
    parts = {p.uri: p for p in proposal_edits(proposal(), DOCUMENTS, EMACS.support)}
    assert parts["file:///w/a.py"].after == "a\nB\nc\nd\n"
    assert parts["file:///w/new.md"].after == NEW_FILE
    only_b = file_edit(proposal().files["file:///w/a.py"], OLD, 3, EMACS.support, set())
    assert only_b.after == OLD  # nothing chosen: nothing changes


def test_with_file_operations_the_editor_creates_and_deletes() -> None:
    edit = workspace_edit(proposal_edits(proposal(), DOCUMENTS, VSCODE.support), VSCODE.support)
    kinds = [type(c).__name__ for c in edit.document_changes]
    assert kinds == ["TextDocumentEdit", "CreateFile", "TextDocumentEdit", "DeleteFile"]
    versions = [
        c.text_document.version for c in edit.document_changes if isinstance(c, T.TextDocumentEdit)
    ]
    assert versions == [3, None]


def test_document_changes_without_file_operations_fill_the_new_document() -> None:
    edit = workspace_edit(proposal_edits(proposal(), DOCUMENTS, EMACS.support), EMACS.support)
    assert not any(isinstance(c, T.CreateFile | T.DeleteFile) for c in edit.document_changes)
    [fill] = [c for c in edit.document_changes if c.text_document.uri == "file:///w/new.md"]
    assert apply("", fill.edits) == NEW_FILE


def test_a_new_file_open_in_the_editor_is_replaced_whole_or_refused_when_typed_in() -> None:
    change = proposal().files["file:///w/new.md"]
    for empty in ("", "\n"):
        part = file_edit(change, empty, 4, NEOVIM.support)
        assert apply(empty, part.edits) == NEW_FILE and list(part.covered) == [change.hunks[0].id]
    typed = file_edit(change, "mine\n", 5, NEOVIM.support)
    assert typed.edits == [] and [x.reason for x in typed.left] == ["stale"]


def test_what_is_left_is_placed_where_it_will_be_after_the_edit() -> None:
    change = make_proposal("p", {"u": ("/w/b.py", "a\nb\nc\nd\n", "A\nA2\nb\nc\nD\n")}).files["u"]
    # The user changed the line under the second hunk: stale, and after the first hunk adds
    # a line it will be on line 4 (0-based), not 3.
    part = file_edit(change, "a\nb\nc\nd!\n", 1, NEOVIM.support)
    assert len(part.covered) == 1
    [left] = part.left_after()
    assert (left.line, left.reason) == (4, "stale")


def test_a_deletion_already_done_counts_as_applied_and_one_not_possible_says_why() -> None:
    change = proposal().files["file:///w/gone.py"]
    gone = file_edit(change, None, None, NEOVIM.support)  # the user deleted it already
    assert list(gone.covered) == [change.hunks[0].id] and gone.left == []
    kept = file_edit(change, "x\n", None, EMACS.support)
    assert workspace_edit([kept], EMACS.support) is None and kept.refusal == "cannot delete"


def test_an_edit_of_stale_hunks_is_refused_as_stale() -> None:
    change = make_proposal("p", {"u": ("/w/b.py", "a\nb\n", "a\nB\n")}).files["u"]
    part = file_edit(change, "a\nb!\n", 2, VSCODE.support)
    assert part.empty and workspace_edit([part], VSCODE.support) is None
    assert part.refusal == "stale" and [(x.line, x.reason) for x in part.left] == [(1, "stale")]


def test_only_the_chosen_hunks_are_applied() -> None:
    change = make_proposal("p", {"u": ("/w/b.py", "a\nb\nc\n", "A\nb\nC\n")}).files["u"]
    first, last = change.hunks
    part = file_edit(change, "a\nb\nc\n", 1, NEOVIM.support, {last.id})
    assert list(part.covered) == [last.id] and apply("a\nb\nc\n", part.edits) == "a\nb\nC\n"
    change.decide("accepted", [last.id])
    assert list(file_edit(change, "a\nb\nC\n", 2, NEOVIM.support).covered) == [first.id]


def test_outstanding_names_every_pending_hunk_and_whether_it_would_apply() -> None:
    changed = {**DOCUMENTS, "file:///w/a.py": ("a\nb!\nc\n", 4)}
    left = outstanding(proposal(), changed, VSCODE.support)
    assert [(x.uri.rsplit("/", 1)[1], x.line, x.reason) for x in left] == [
        ("a.py", 1, "stale"),
        ("a.py", 3, "pending"),
        ("gone.py", 0, "pending"),  # VS Code deletes it
        ("new.md", 0, "pending"),
    ]


def test_an_annotation_needs_document_changes_to_travel() -> None:
    label = ("deepacp", T.ChangeAnnotation(label="tidy", needs_confirmation=True))
    parts = proposal_edits(proposal(), DOCUMENTS, PLAIN)
    plain = workspace_edit(parts, PLAIN, label)
    assert plain.change_annotations is None and set(plain.changes) == {
        "file:///w/a.py",
        "file:///w/new.md",
    }
    for client in (NEOVIM, EMACS):  # documentChanges, but no annotations declared
        edit = workspace_edit(
            proposal_edits(proposal(), DOCUMENTS, client.support), client.support, label
        )
        assert edit.change_annotations is None
        assert not any(
            isinstance(e, T.AnnotatedTextEdit) for c in edit.document_changes for e in c.edits
        )
    assert workspace_edit([], VSCODE.support, label) is None
