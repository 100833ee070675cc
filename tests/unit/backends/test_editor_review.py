"""EditorReview: the agent's writes through the editor, read back to see what the user did."""

from __future__ import annotations

from pathlib import Path

from deepacp.backends import EditorBackend, FilesystemBackend
from deepacp.backends.editor_review import EditorReview
from tests.unit.backends.test_editor import FakeEditor


async def test_writes_are_read_back_and_each_change_told_once(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("a\nb\n")
    editor = FakeEditor()
    review = EditorReview(editor)
    backend = EditorBackend(FilesystemBackend(tmp_path), editor, review)
    await backend.edit("app.py", "a\n", "A\n")
    await backend.write_text("new.py", "n\n")
    assert await review.note() is None  # the buffers hold what the agent wrote
    target = str(tmp_path / "app.py")
    editor.buffers[target] = "a\nb\n"  # the user rejected the hunk
    [finding] = await review.findings()
    assert (finding.path, finding.kind, finding.wrote, finding.now) == (
        "app.py",
        "rejected",
        ("A\n",),
        ("a\n",),
    )
    assert await review.findings() == []  # told once

    # The editor no longer answers: a file on disk is asked about again later; a file only
    # the editor had (created, never saved) is gone, as after a rejected creation.
    editor.buffers[target] = "a\nchanged\n"
    editor.refuse = "no such buffer"
    assert [(f.path, f.kind) for f in await review.findings()] == [("new.py", "gone")]
    editor.refuse = None
    assert [(f.path, f.kind) for f in await review.findings()] == [("app.py", "changed")]


async def test_a_file_the_agent_deletes_is_no_longer_followed(tmp_path: Path) -> None:
    (tmp_path / "gone.py").write_text("x\n")
    editor = FakeEditor()
    review = EditorReview(editor)
    backend = EditorBackend(FilesystemBackend(tmp_path), editor, review)
    await backend.write_text("gone.py", "y\n")
    await backend.delete("gone.py")
    assert not review.tracks(str(tmp_path / "gone.py"))


async def test_a_fresh_conversation_hears_nothing_of_earlier_writes(tmp_path: Path) -> None:
    editor = FakeEditor()
    review = EditorReview(editor)
    backend = EditorBackend(FilesystemBackend(tmp_path), editor, review)
    await backend.write_text("a.py", "mine\n")
    editor.buffers[str(tmp_path / "a.py")] = "theirs\n"
    review.forget_all()  # /clear
    assert await review.note() is None
