"""What the server says in words: what an edit request came to, what an accept put into
the editor and what is left where, why a change was refused."""

from deepacp.lsp.edits import Left
from deepacp.lsp.messages import (
    accept_message,
    busy_message,
    outcome_message,
    refusal_message,
)
from deepacp.lsp.proposal import make_proposal
from tests.unit.lsp_face.proposals import name
from tests.unit.lsp_face.proposals import three_files as a_proposal


def test_outcome_messages() -> None:
    proposal = a_proposal()
    assert outcome_message(proposal, name) == (
        "deepacp proposes 4 changes in src/a.py, notes.md (new), old.py (deleted): "
        "Added zero and shouted three."
    )
    proposal.partial = True
    assert outcome_message(proposal, name).startswith(
        "deepacp: cancelled; the 4 changes made before that are kept as a partial proposal"
    )
    empty = make_proposal("p2", {})
    empty.rationale = "Nothing to do."
    assert outcome_message(empty, name) == "deepacp: no change proposed: Nothing to do."


def test_accept_messages_say_what_is_unsaved_and_what_is_left_where() -> None:
    proposal = a_proposal()
    left = [Left("file:///w/src/a.py", 2, "stale")]
    assert accept_message(proposal, ["file:///w/notes.md"], left, name) == (
        "deepacp: accepted into the editor, not saved yet: notes.md (new); still pending: "
        "src/a.py line 3 (stale: the text under it changed since it was proposed)"
    )
    assert accept_message(proposal, [], [], name) == (
        "deepacp: nothing left to accept in this proposal"
    )


def test_an_outcome_with_nothing_made_says_so() -> None:
    nothing = make_proposal("p3", {})
    assert outcome_message(nothing, name) == "deepacp: no change proposed"
    nothing.partial = True
    assert outcome_message(nothing, name) == "deepacp: cancelled before anything was proposed"
    one = make_proposal("p4", {"u": ("/w/a.py", "a\n", "b\n")})
    assert outcome_message(one, name) == "deepacp proposes 1 change in a.py"


def test_what_is_left_says_where_and_why() -> None:
    proposal = a_proposal()
    left = [Left("file:///w/old.py", 0, "delete"), Left("file:///w/src/a.py", 0, "pending")]
    assert accept_message(proposal, [], left, name) == (
        "deepacp: nothing accepted; still pending: "
        "old.py (to delete: this editor cannot delete files for deepacp); src/a.py line 1"
    )


def test_a_refusal_says_what_to_do() -> None:
    assert refusal_message("cannot delete", "old.py") == (
        "deepacp: this editor cannot delete files for deepacp; delete old.py yourself, "
        "or reject the change"
    )
    assert refusal_message("stale", "a.py") == (
        "deepacp: the text under that change was edited since; refused (stale)"
    )


def test_an_outcome_names_the_proposals_still_open_beside_it() -> None:
    earlier, later = a_proposal(), make_proposal("p2", {"u": ("/w/src/a.py", "a\n", "b\n")})
    earlier.instruction = "tidy the helpers\nand more"
    assert outcome_message(later, name, [earlier, later]) == (
        "deepacp proposes 1 change in src/a.py (also still open: p1: tidy the helpers in "
        "src/a.py, notes.md (new), old.py (deleted))"
    )
    earlier.reject_all()
    assert outcome_message(later, name, [earlier, later]) == "deepacp proposes 1 change in src/a.py"


def test_what_the_editor_did_not_apply_and_what_is_being_applied() -> None:
    proposal = a_proposal()
    refused = [("file:///w/src/a.py", "declined in Emacs")]
    assert accept_message(proposal, ["file:///w/notes.md"], [], name, refused) == (
        "deepacp: accepted into the editor, not saved yet: notes.md (new); the editor did not "
        "apply src/a.py (declined in Emacs)"
    )
    assert busy_message(proposal, ["file:///w/src/a.py"], name) == (
        "deepacp: already being applied: src/a.py (waiting for the editor); nothing sent again"
    )
