"""Hunks: a created file is one hunk that fills an empty document; each hunk gets the
agent's reason for the edit that wrote it."""

from deepacp.lsp.proposal import EditNote, attach_notes, make_hunks, make_proposal


def test_a_created_or_deleted_file_is_one_hunk_even_when_empty() -> None:
    [created] = make_hunks(None, "a\nb\n")
    assert (created.old_lines, created.new_lines) == ([], ["a\n", "b\n"])
    assert len(make_hunks(None, "")) == 1 and len(make_hunks("x\n", None)) == 1


def test_a_created_file_applies_only_to_an_empty_document() -> None:
    change = make_proposal("p", {"u": ("/w/n.md", None, "x\n")}).files["u"]
    [hunk] = change.hunks
    assert change.locate(hunk, []) == 0 and change.locate(hunk, ["\n"]) == 0
    assert change.locate(hunk, ["typed\n"]) is None


def test_each_hunk_gets_the_reason_of_the_edit_that_wrote_it() -> None:
    old = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\nX = 1\n"
    new = old.replace("a + b", "a + b + 0").replace("def sub", "def subtract")
    new = new.removesuffix("X = 1\n")
    proposal = make_proposal("p", {"u": ("/w/calc.py", old, new)})
    notes = [
        EditNote("/w/calc.py", "a + b + 0", "a + b", "Make add explicit."),
        EditNote("/w/calc.py", "def subtract(a, b):", "def sub(a, b):", ""),
        EditNote("/w/calc.py", "", "X = 1\n", "Drop X."),
        EditNote("/w/other.py", "def subtract", "", "Not this file."),
    ]
    attach_notes(proposal, notes)
    assert [h.note for h in proposal.files["u"].hunks] == [
        "Make add explicit.",
        "",  # the agent said nothing before that edit
        "Drop X.",
    ]
