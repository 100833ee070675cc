"""What the model is told about the user's review: rejected and changed regions, bounded."""

from __future__ import annotations

from deepacp.feedback import MAX_REGION_LINES, ReviewFinding, review_findings, review_note

BEFORE = "a\nb\nc\nd\n"


def test_a_hunk_put_back_is_a_rejection_and_other_text_a_change() -> None:
    written = "A\nb\nc\nD\n"
    current = "a\nb\nc\nDD\n"
    found = review_findings("f.py", BEFORE, written, current)
    assert [(f.kind, f.line, f.wrote, f.now) for f in found] == [
        ("rejected", 0, ("A\n",), ("a\n",)),
        ("changed", 3, ("D\n",), ("DD\n",)),
    ]


def test_a_deletion_put_back_and_an_insertion_taken_out_are_rejections() -> None:
    written = "a\nnew\nd\n"  # b and c removed, new inserted
    assert [f.kind for f in review_findings("f.py", BEFORE, written, BEFORE)] == ["rejected"]
    assert review_findings("f.py", BEFORE, written, written) == []


def test_a_created_file_gone_and_a_created_file_edited() -> None:
    assert review_findings("n.py", None, "x\n", None) == [ReviewFinding("n.py", "gone")]
    [edited] = review_findings("n.py", None, "x\n", "y\n")
    assert edited.kind == "changed"


def test_the_note_is_bounded_and_says_where() -> None:
    assert review_note([]) is None
    long = tuple(f"line {i}\n" for i in range(MAX_REGION_LINES + 30))
    note = review_note([ReviewFinding("f.py", "changed", 4, ("x\n",), long)] * 40) or ""
    assert "f.py, lines 5-54: the user changed this text" in note
    assert "30 more lines" in note and "line 29" not in note.split("```")[3]
    assert len(note) < 8_000 and "more changed regions" in note
