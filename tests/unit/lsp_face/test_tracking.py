"""Spans of lines carried through the changes made to a document."""

from __future__ import annotations

from deepacp.lsp.tracking import Spans


def carried(old: str, new: str, span: tuple[int, int]) -> tuple[int, int]:
    spans = Spans(old.splitlines(keepends=True), {"h": span})
    spans.follow(new.splitlines(keepends=True))
    return spans["h"]


def test_lines_added_or_removed_around_a_span_move_it() -> None:
    text = "a\nb\nc\nd\n"
    assert carried(text, "x\ny\n" + text, (1, 3)) == (3, 5)
    assert carried(text, text.replace("a\n", ""), (1, 3)) == (0, 2)
    assert carried(text, text + "e\n", (1, 3)) == (1, 3)


def test_lines_added_at_a_spans_edges_stay_outside_it() -> None:
    text = "a\nb\nc\nd\n"
    assert carried(text, "a\nnew\nb\nc\nnew\nd\n", (1, 3)) == (2, 4)


def test_a_change_inside_or_across_a_span_widens_it_to_what_is_there_now() -> None:
    text = "a\nb\nc\nd\n"
    assert carried(text, "a\nB\nc\nd\n", (1, 3)) == (1, 3)
    assert carried(text, "a\nB\nC\nD\nd\n", (1, 3)) == (1, 4)  # b and c replaced by three lines
    assert carried(text, "a\nd\n", (1, 3)) == (1, 1)  # all of it deleted


def test_a_place_between_lines_follows_the_line_before_it() -> None:
    text = "a\nb\n"
    assert carried(text, "top\na\nb\n", (1, 1)) == (2, 2)
    assert carried(text, "a\nmine\nb\n", (1, 1)) == (1, 1)  # typed at the place: after it
    assert carried(text, "a\nb\n", (2, 2)) == (2, 2)
