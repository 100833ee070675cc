"""How a proposal is shown, per client tier: hints per hunk, hover diffs with proper
headers, code actions carrying the edit shaped for the client, review in the editor where
annotations are declared, opt-in code lenses."""

import pytest
from lsprotocol import types as T

from deepacp.lsp import review
from deepacp.lsp.applying import digest
from deepacp.lsp.proposal import make_proposal
from deepacp.lsp.review import (
    annotated_edit,
    code_actions,
    code_lenses,
    command,
    diagnostics,
    hover,
    what_it_does,
)
from tests.support.lsp import HUNK_ACTIONS
from tests.unit.lsp_face.clients import CLIENTS, Client, apply, edits_for, operations
from tests.unit.lsp_face.proposals import NEW, OLD, A, D, N, name, three_files


def a_proposal():
    """An edited src/a.py and a new notes.md."""
    return three_files(deleting=False)


def test_hints_say_what_each_hunk_does() -> None:
    proposal = a_proposal()
    change = proposal.files["file:///w/src/a.py"]
    change.hunks[1].note = "Shout three."
    assert [d.message for d in diagnostics(proposal, change, OLD)] == [
        "deepacp proposes: zero",
        "deepacp: Shout three.",
    ]
    new_file = proposal.files["file:///w/notes.md"]
    assert diagnostics(proposal, new_file, "")[0].message == "deepacp proposes: new file: - x"
    proposal.partial = True
    assert diagnostics(proposal, change, OLD)[1].message == (
        "deepacp (partial: the run was cancelled): Shout three."
    )


def test_hover_shows_a_workspace_relative_unified_hunk() -> None:
    proposal = a_proposal()
    change = proposal.files["file:///w/src/a.py"]
    body = hover(proposal, change, OLD, 2, name).contents.value
    # The first hunk (one line added above) shifts the new side by one.
    assert "--- a/src/a.py\n+++ b/src/a.py\n@@ -3,1 +4,1 @@\n-three\n+THREE\n" in body
    assert "//" not in body
    first = hover(proposal, change, OLD, 0, name).contents.value
    assert "@@ -0,0 +1,1 @@\n+zero\n" in first  # an insertion names the line before it
    created = hover(proposal, proposal.files["file:///w/notes.md"], "", 0, name).contents.value
    assert "--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1,1 @@\n+- x\n" in created


def three_files_open():
    """three_files() and the documents as the editor holds them: a.py open at version 7,
    the others not open."""
    documents = {A: (OLD, 7), N: (None, None), D: ("OLD = 1\n", None)}
    return three_files(), documents


def line(number: int) -> T.Range:
    return T.Range(T.Position(number, 0), T.Position(number, 0))


def offered(client: Client, proposal, documents, uri: str, at: int) -> dict[str, T.CodeAction]:
    change = proposal.files[uri]
    found = code_actions(proposal, change, documents, line(at), client.support, client.tiers)
    return {a.title: a for a in found}


def hunk_ids(proposal, uri: str) -> list[str]:
    return [h.id for h in proposal.files[uri].hunks]


def created_text(client: Client, edit: T.WorkspaceEdit) -> str:
    """The new file's text once the editor has applied `edit`: created empty by the
    editor, or filled into the one empty line it opens a missing file as."""
    empty = "" if "CreateFile" in operations(edit) else "\n"
    return apply(empty, edits_for(edit, N))


@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: c.name)
def test_accept_actions_carry_the_edit_shaped_for_the_client(client: Client) -> None:
    proposal, documents = three_files_open()
    found = offered(client, proposal, documents, A, 2)
    expected = set(HUNK_ACTIONS)
    if client.support.annotations:
        expected.add("deepacp: Review in editor")
    assert set(found) == expected
    zero, three = hunk_ids(proposal, A)

    hunk = found["deepacp: Accept this hunk"]
    assert apply(OLD, edits_for(hunk.edit, A)) == "one\ntwo\nTHREE\nfour\n"
    assert hunk.command.command == review.ACCEPTED
    # The bookkeeping names the hunks and the text before and after the edit, so the
    # server counts them only if the editor's text shows the edit.
    after = "one\ntwo\nTHREE\nfour\n"
    assert hunk.command.arguments == ["p1", A, [three], digest(OLD), digest(after)]
    assert found["deepacp: Reject hunk"].command.arguments == ["p1", A, three]

    whole_file = found["deepacp: Accept all in file"]
    assert apply(OLD, edits_for(whole_file.edit, A)) == NEW
    assert whole_file.command.arguments == ["p1", A, [zero, three], digest(OLD), digest(NEW)]

    everything = found["deepacp: Accept proposal"]
    edit = everything.edit
    assert apply(OLD, edits_for(edit, A)) == NEW and created_text(client, edit) == "- x\n"
    covered = everything.command.arguments[1]
    assert everything.command.arguments[2][A] == [digest(OLD), digest(NEW)]
    if client.support.versioned_edits:
        versions = [c.text_document.version for c in edit.document_changes if hasattr(c, "edits")]
        assert versions == [7, None]  # the open document's version; the new one has none
    if client is CLIENTS[0]:  # VS Code: the editor creates and deletes the files
        assert operations(edit) == [
            "TextDocumentEdit",
            "CreateFile",
            "TextDocumentEdit",
            "DeleteFile",
        ]
        assert covered == {A: [zero, three], N: hunk_ids(proposal, N), D: hunk_ids(proposal, D)}
    else:  # no file operations: the new file is a text edit, the deletion is left out
        assert operations(edit) == (
            ["TextDocumentEdit", "TextDocumentEdit"]
            if client.support.versioned_edits
            else ["edit", "edit"]
        )
        assert covered == {A: [zero, three], N: hunk_ids(proposal, N)}


@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: c.name)
def test_a_deletion_is_accepted_only_where_the_client_deletes_files(client: Client) -> None:
    proposal, documents = three_files_open()
    found = offered(client, proposal, documents, D, 0)
    if client.support.document_changes and client.support.delete_files:
        [delete] = found["deepacp: Accept this hunk"].edit.document_changes
        assert isinstance(delete, T.DeleteFile) and delete.uri == D
    else:
        assert "deepacp: Accept this hunk" not in found
        assert "deepacp: Accept all in file" not in found
        reject = found["deepacp: reject hunk (this editor cannot delete files for deepacp)"]
        assert reject.command.arguments == ["p1", D, hunk_ids(proposal, D)[0]]


@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: c.name)
def test_a_stale_hunk_can_only_be_rejected_on_the_line_its_hint_is_on(client: Client) -> None:
    proposal, documents = three_files_open()
    zero, three = hunk_ids(proposal, A)
    for text in ("one\ntwo\nthree!\nfour\n", "x\n"):  # the line edited; the file emptied
        documents[A] = (text, 8)
        [stale] = [
            d for d in diagnostics(proposal, proposal.files[A], text) if "stale" in d.message
        ]
        found = offered(client, proposal, documents, A, stale.range.start.line)
        why = "deepacp: reject hunk (the text changed since it was proposed)"
        assert found[why].command.arguments == ["p1", A, three]
        # What still applies is offered: the insertion at the top, not the stale hunk.
        assert found["deepacp: Accept all in file"].command.arguments[:3] == ["p1", A, [zero]]


@pytest.mark.parametrize("client", CLIENTS, ids=lambda c: c.name)
def test_review_in_editor_is_one_edit_needing_confirmation_where_annotations_are_declared(
    client: Client,
) -> None:
    proposal, documents = three_files_open()
    edit, covered = annotated_edit(proposal, documents, client.support)
    assert apply(OLD, edits_for(edit, A)) == NEW and created_text(client, edit) == "- x\n"
    if client.support.annotations:
        annotation = edit.change_annotations["deepacp"]
        assert annotation.needs_confirmation is True
        assert (annotation.label, annotation.description) == (
            "Added zero and shouted three.",
            "Added zero and shouted three.",
        )
        text_edits = [e for c in edit.document_changes if hasattr(c, "edits") for e in c.edits]
        assert all(isinstance(e, T.AnnotatedTextEdit) for e in text_edits)
        files = [c for c in edit.document_changes if isinstance(c, T.CreateFile | T.DeleteFile)]
        assert [c.annotation_id for c in files] == ["deepacp", "deepacp"]
        assert set(covered) == {A, N, D}
    else:  # an editor that did not declare annotations gets none
        assert edit.change_annotations is None
        assert set(covered) == {A, N}


def test_code_lenses_accept_or_discard_each_hunk_that_still_applies() -> None:
    proposal = three_files()
    zero, three = hunk_ids(proposal, A)
    lenses = code_lenses(proposal, proposal.files[A], OLD)
    assert [(x.range.start.line, x.command.title, x.command.command) for x in lenses] == [
        (0, "Accept", review.ACCEPT_HUNK),
        (0, "Discard", review.REJECT_HUNK),
        (2, "Accept", review.ACCEPT_HUNK),
        (2, "Discard", review.REJECT_HUNK),
    ]
    assert lenses[2].command.arguments == ["p1", A, three]
    stale = code_lenses(proposal, proposal.files[A], "one\ntwo\nthree!\nfour\n")
    assert [x.command.arguments[2] for x in stale] == [zero, zero]


def test_hints_cover_the_lines_a_hunk_replaces_and_name_it() -> None:
    proposal = three_files()
    three = hunk_ids(proposal, A)[1]
    insert, replace = diagnostics(proposal, proposal.files[A], OLD)
    assert insert.range == line(0)  # an insertion: a point before the line it goes above
    assert replace.range == T.Range(T.Position(2, 0), T.Position(3, 0))
    assert (replace.source, replace.code) == ("deepacp", "proposal")
    assert replace.data == {"proposal": "p1", "hunk": three}
    proposal.partial = True
    [_, stale] = diagnostics(proposal, proposal.files[A], "one\ntwo\nthree!\nfour\n")
    assert stale.severity == T.DiagnosticSeverity.Warning
    assert stale.message == (
        "deepacp: this proposed change no longer matches the text (stale) "
        "(partial: the run was cancelled)"
    )
    [gone] = diagnostics(proposal, proposal.files[D], "OLD = 1\n")
    assert "delete this file" in gone.message


def test_hover_is_only_over_a_hunk_that_still_applies() -> None:
    proposal = three_files()
    change = proposal.files[A]
    assert hover(proposal, change, OLD, 3, name) is None  # "four" is unchanged
    assert hover(proposal, change, "one\ntwo\nthree!\nfour\n", 2, name) is None  # stale
    body = hover(proposal, change, OLD, 2, name).contents.value
    assert body.startswith("**deepacp** — THREE\n\n```diff\n")
    assert body.endswith("```\n\nAdded zero and shouted three.")  # the agent's summary
    change.hunks[1].note = "Added zero and shouted three."
    proposal.partial = True
    body = hover(proposal, change, OLD, 2, name).contents.value
    assert body.startswith("**deepacp** — Added zero and shouted three. (partial")
    assert body.endswith("```")  # not said twice


def test_what_a_hunk_does_in_one_line() -> None:
    proposal = make_proposal(
        "p",
        {
            "r": ("/w/r.py", "keep\ndrop me\n", "keep\n"),
            "e": ("/w/e.py", None, ""),
            "g": ("/w/g.py", "x\n", None),
        },
    )
    [removal] = proposal.files["r"].hunks
    assert what_it_does(proposal.files["r"], removal) == "remove drop me"
    assert what_it_does(proposal.files["e"], proposal.files["e"].hunks[0]) == "new empty file"
    assert what_it_does(proposal.files["g"], proposal.files["g"].hunks[0]) == "delete this file"
    removal.note = "x" * 300 + "\nsecond line"
    assert what_it_does(proposal.files["r"], removal) == "x" * 200


def test_a_command_carries_its_arguments_as_a_list() -> None:
    made = command("Accepted", review.ACCEPTED, "p1", A, ["h1"])
    assert (made.title, made.command, made.arguments) == (
        "Accepted",
        review.ACCEPTED,
        ["p1", A, ["h1"]],
    )
