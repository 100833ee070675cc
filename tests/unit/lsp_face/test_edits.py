"""Workspace edits per client tier: nothing is left for the server to write, a new file
fills the editor's empty document exactly, a deletion needs the client's DeleteFile."""

from lsprotocol import types as T

from deepacp.lsp.capabilities import ClientSupport
from deepacp.lsp.edits import file_edit, outstanding, proposal_edits, whole_range, workspace_edit
from deepacp.lsp.proposal import make_proposal

NEOVIM = ClientSupport(False, True, True, False, False, True, True, False)  # 0.7
EMACS = ClientSupport(True, False, False, False, False, False, True, False)
VSCODE = ClientSupport(True, True, True, True, True, True, True, False)
OLD = "a\nb\nc\n"
NEW_FILE = "- one\n- two\n"


def apply(text: str, edits: list[T.TextEdit]) -> str:
    """Apply edits as an editor does, clamping a range that ends past the document."""
    lines = text.splitlines(keepends=True)
    for edit in sorted(edits, key=lambda e: e.range.start.line, reverse=True):
        start, end = edit.range.start.line, min(edit.range.end.line, len(lines))
        lines[start:end] = [edit.new_text] if edit.new_text else []
    return "".join(lines)


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


def test_without_document_changes_a_new_file_is_a_text_edit_filling_its_empty_buffer() -> None:
    parts = proposal_edits(proposal(), DOCUMENTS, NEOVIM)
    edit = workspace_edit(parts, NEOVIM)
    assert edit.document_changes is None
    assert apply("\n", edit.changes["file:///w/new.md"]) == NEW_FILE
    assert apply(OLD, edit.changes["file:///w/a.py"]) == "a\nB\nc\nd\n"
    assert "file:///w/gone.py" not in edit.changes  # no way to delete: left to the user
    left = {x.uri: x.reason for x in outstanding(proposal(), DOCUMENTS, NEOVIM)}
    assert left["file:///w/gone.py"] == "delete" and left["file:///w/new.md"] == "pending"


def test_with_file_operations_the_editor_creates_and_deletes() -> None:
    edit = workspace_edit(proposal_edits(proposal(), DOCUMENTS, VSCODE), VSCODE)
    kinds = [type(c).__name__ for c in edit.document_changes]
    assert kinds == ["TextDocumentEdit", "CreateFile", "TextDocumentEdit", "DeleteFile"]
    versions = [
        c.text_document.version for c in edit.document_changes if isinstance(c, T.TextDocumentEdit)
    ]
    assert versions == [3, None]


def test_document_changes_without_file_operations_fill_the_new_document() -> None:
    edit = workspace_edit(proposal_edits(proposal(), DOCUMENTS, EMACS), EMACS)
    assert not any(isinstance(c, T.CreateFile | T.DeleteFile) for c in edit.document_changes)
    [fill] = [c for c in edit.document_changes if c.text_document.uri == "file:///w/new.md"]
    assert apply("", fill.edits) == NEW_FILE


def test_a_new_file_open_in_the_editor_is_replaced_whole_or_refused_when_typed_in() -> None:
    change = proposal().files["file:///w/new.md"]
    for empty in ("", "\n"):
        part = file_edit(change, empty, 4, NEOVIM)
        assert apply(empty, part.edits) == NEW_FILE and list(part.covered) == [change.hunks[0].id]
    typed = file_edit(change, "mine\n", 5, NEOVIM)
    assert typed.edits == [] and [x.reason for x in typed.left] == ["stale"]


def test_what_is_left_is_placed_where_it_will_be_after_the_edit() -> None:
    change = make_proposal("p", {"u": ("/w/b.py", "a\nb\nc\nd\n", "A\nA2\nb\nc\nD\n")}).files["u"]
    # The user changed the line under the second hunk: stale, and after the first hunk adds
    # a line it will be on line 4 (0-based), not 3.
    part = file_edit(change, "a\nb\nc\nd!\n", 1, NEOVIM)
    assert len(part.covered) == 1
    [left] = part.left_after()
    assert (left.line, left.reason) == (4, "stale")
