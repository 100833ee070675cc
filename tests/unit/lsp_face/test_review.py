"""What the user reads: hints per hunk, hover diffs with proper headers, outcome messages."""

from pathlib import Path

from deepacp.lsp.edits import Left
from deepacp.lsp.messages import accept_message, outcome_message
from deepacp.lsp.proposal import make_proposal
from deepacp.lsp.review import diagnostics, hover

OLD = "one\ntwo\nthree\nfour\n"
NEW = "zero\none\ntwo\nTHREE\nfour\n"


def name(path: str) -> str:
    return Path(path).relative_to("/w").as_posix()


def a_proposal():
    proposal = make_proposal(
        "p1",
        {
            "file:///w/src/a.py": ("/w/src/a.py", OLD, NEW),
            "file:///w/notes.md": ("/w/notes.md", None, "- x\n"),
        },
    )
    proposal.rationale = "Added zero and shouted three."
    return proposal


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


def test_outcome_messages() -> None:
    proposal = a_proposal()
    assert outcome_message(proposal, name) == (
        "deepacp proposes 3 changes in src/a.py, notes.md (new): Added zero and shouted three."
    )
    proposal.partial = True
    assert outcome_message(proposal, name).startswith(
        "deepacp: cancelled; the 3 changes made before that are kept as a partial proposal"
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
