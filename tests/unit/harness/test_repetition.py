"""The loop detector: loops are found within a few hundred characters, however the stream
is cut; prose and code written out in a reply are not loops."""

from pathlib import Path

import pytest

from deepacp.harness.repetition import RepetitionDetector, repetition_in


def streamed(text: str, size: int):
    detector = RepetitionDetector()
    for i in range(0, len(text), size):
        if found := detector.feed(text[i : i + size]):
            return found, i
    return None, len(text)


@pytest.mark.parametrize("size", [1, 3, 8, 100])
def test_a_loop_is_found_early_whatever_the_chunks(size):
    text = "Here is the plan. " + "[list_task: " * 10_000
    found, at = streamed(text, size)
    assert found is not None and at < 1_000
    assert found.before == "Here is the plan. "
    assert found.phrase == "[list_task: [list_task: [list_task"


def test_a_repeated_sentence_is_a_loop():
    found = repetition_in("I will now read the file to check it. " * 40)
    assert found is not None and found.phrase.startswith("I will now read")


def test_prose_and_code_are_not_loops():
    source = "\n".join(
        p.read_text() for p in sorted(Path("deepacp/harness/middleware").glob("*.py"))
    )
    assert repetition_in(source) is None
    for page in [Path("README.md"), *sorted(Path("docs").rglob("*.md"))]:
        assert repetition_in(page.read_text()) is None, page


def test_a_stutter_of_one_or_two_words_is_left_to_the_output_cap():
    assert repetition_in("word " * 2000) is None
    assert repetition_in("streamed words " * 400) is None
