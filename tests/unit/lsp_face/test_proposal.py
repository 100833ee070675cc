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


OLD = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
NEW = OLD.replace("a + b", "a + b + 0").replace("def sub", "def subtract")


def two_hunks():
    """calc.py with a hunk on line 1 and one on line 4 (0-based)."""
    proposal = make_proposal("p", {"u": ("/w/calc.py", OLD, NEW)})
    return proposal, proposal.files["u"]


def where(change, text: str) -> list[tuple[int, bool]]:
    return [(p.line, p.stale) for p in change.placed(text)]


def test_accepting_and_rejecting_decide_pending_hunks_once() -> None:
    proposal, change = two_hunks()
    add, sub = change.hunks
    assert proposal.accept({"u": [add.id]}) == 1 and add.state == "accepted"
    # A decision is final: a late or repeated command changes nothing.
    assert proposal.reject({"u": [add.id]}) == 0 and add.state == "accepted"
    assert proposal.accept({"u": [add.id]}) == 0
    assert proposal.reject({"u": [sub.id]}) == 1 and sub.state == "rejected"
    assert proposal.accept({"u": [sub.id]}) == 0 and sub.state == "rejected"
    assert not proposal.pending and change.pending == []


def test_unknown_files_and_hunks_are_ignored() -> None:
    proposal, change = two_hunks()
    assert proposal.accept({"file:///elsewhere.py": [change.hunks[0].id]}) == 0
    assert proposal.accept({"u": ["h-none"]}) == 0
    assert [h.state for h in change.hunks] == ["pending", "pending"]


def test_rejecting_a_file_or_everything_counts_only_what_was_pending() -> None:
    proposal = make_proposal(
        "p", {"u": ("/w/calc.py", OLD, NEW), "n": ("/w/new.md", None, "- x\n")}
    )
    proposal.accept({"u": [proposal.files["u"].hunks[0].id]})
    assert proposal.reject({"n": None}) == 1 and proposal.files["n"].pending == []
    assert proposal.reject_all() == 1  # the accepted hunk stays accepted
    assert [h.state for h in proposal.files["u"].hunks] == ["accepted", "rejected"]
    assert proposal.reject_all() == 0


def test_a_partial_proposal_is_decided_like_any_other() -> None:
    proposal, change = two_hunks()
    proposal.partial = True
    assert proposal.accept({"u": [h.id for h in change.hunks]}) == 2 and not proposal.pending


def test_counts_and_summary() -> None:
    proposal, _ = two_hunks()
    assert proposal.hunk_count == 2
    assert proposal.summary == "a change proposed by deepacp"  # the agent said nothing
    proposal.rationale = "\n  Renamed sub.\nAnd more on a second line.\n"
    assert proposal.summary == "Renamed sub."


def test_a_hunk_is_found_after_the_text_above_it_moves() -> None:
    _, change = two_hunks()
    assert where(change, OLD) == [(1, False), (4, False)]
    moved = "import os\nimport sys\n" + OLD
    assert where(change, moved) == [(3, False), (6, False)]
    fewer = OLD.replace("\n\n\n", "\n")  # two blank lines between the functions removed
    assert where(change, fewer) == [(1, False), (2, False)]


def test_a_hunk_follows_the_lines_added_above_it_accepted_or_typed() -> None:
    old = "x = 1\n" * 6  # the same line six times: only the edits tell them apart
    proposal = make_proposal("p", {"u": ("/w/x.py", old, "head\n" + old[:-6] + "x = 2\n")})
    change = proposal.files["u"]
    insert, last = change.hunks
    assert (insert.start, last.start) == (0, 5)
    now = ("head\n" + old).splitlines(keepends=True)  # the insertion is in the editor
    assert change.locate(last, now) == 6  # accepted or not, the text moved under it
    typed = ["mine\n", *now]
    assert change.locate(last, typed) == 7


def test_a_hunk_the_user_edited_is_stale_where_its_lines_went_not_at_a_copy() -> None:
    old = "def one():\n    return 1\n\n\ndef two():\n    return 1\n"
    change = make_proposal("p", {"u": ("/w/f.py", old, old.replace("1", "2", 1))}).files["u"]
    [hunk] = change.hunks
    edited = "import os\n" + old.replace("return 1", "return 111", 1)
    # The same old line is two lines below (in two()): the hunk is not moved onto it.
    assert where(change, edited) == [(2, True)]
    assert change.span(hunk, edited.splitlines(keepends=True)) == (2, 3)


def test_an_insertion_at_the_end_is_offered_on_the_last_line() -> None:
    old = "def one():\n    return 1\n"
    proposal = make_proposal("p", {"u": ("/w/f.py", old, old + "def two():\n    return 2\n")})
    [place] = proposal.files["u"].placed(old)
    assert (place.line, place.row, place.stale) == (2, 1, False)


def test_a_hunk_is_stale_when_the_text_under_it_changed() -> None:
    _, change = two_hunks()
    edited = OLD.replace("def sub(a, b):", "def sub(a, b, c=0):")
    assert where(change, edited) == [(1, False), (4, True)]
    # A stale hunk is shown where it was, within the document the editor holds now.
    assert where(change, "x\n") == [(0, True), (0, True)]


def test_a_pure_insertion_is_anchored_on_the_line_before_it() -> None:
    old = "import os\n\ndef main():\n    pass\n"
    new = "import os\nimport sys\n\ndef main():\n    pass\n"
    change = make_proposal("p", {"u": ("/w/m.py", old, new)}).files["u"]
    [hunk] = change.hunks
    assert (hunk.old_lines, hunk.start) == ([], 1)
    assert where(change, old) == [(1, False)]
    # Lines added above the anchor: the insertion follows it.
    assert where(change, "# header\n\n" + old) == [(3, False)]
    # The anchor line itself changed: nothing to anchor on, so it is stale.
    assert where(change, old.replace("import os", "import os.path")) == [(1, True)]


def test_an_insertion_at_the_top_of_a_file_needs_no_anchor() -> None:
    old = "b\nc\n"
    change = make_proposal("p", {"u": ("/w/t.txt", old, "a\nb\nc\n")}).files["u"]
    assert where(change, old) == [(0, False)]
    assert where(change, "") == [(0, False)]  # even when the document was emptied


def test_a_created_file_is_stale_once_text_was_typed_into_it() -> None:
    change = make_proposal("p", {"u": ("/w/n.md", None, "- x\n")}).files["u"]
    assert where(change, None) == [(0, False)] and where(change, "\r\n") == [(0, False)]
    assert where(change, "mine\n") == [(0, True)]


def test_a_deleted_file_is_stale_when_it_was_changed_since() -> None:
    change = make_proposal("p", {"u": ("/w/old.py", "OLD = 1\n", None)}).files["u"]
    [hunk] = change.hunks
    assert (hunk.old_lines, hunk.new_lines) == (["OLD = 1\n"], [])
    assert where(change, "OLD = 1\n") == [(0, False)]
    assert where(change, "OLD = 2\n") == [(0, True)]


def test_decided_hunks_are_not_placed() -> None:
    proposal, change = two_hunks()
    proposal.reject({"u": [change.hunks[0].id]})
    assert [p.hunk.id for p in change.placed(OLD)] == [change.hunks[1].id]
