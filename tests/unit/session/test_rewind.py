"""Rewinding files across several turns: the first turn's content comes back, and the
conflict check compares with what the last turn left."""

from __future__ import annotations

from pathlib import Path

from deepacp.backends import FilesystemBackend
from deepacp.session.restore import RecordingBackend, RestorePoints, conflicts, finish_turn, restore


async def three_turns(tmp_path: Path) -> tuple[RecordingBackend, RestorePoints, Path]:
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "f.txt").write_text("v0\n")
    points = RestorePoints(tmp_path / "home", "s", root)
    backend = RecordingBackend(FilesystemBackend(root), points)
    for turn in (1, 2, 3):
        points.begin(f"turn {turn}", "thread", f"cp{turn}")
        await backend.write_text("f.txt", f"v{turn}\n")
        await backend.write_text(f"made{turn}.txt", "new\n")
        await finish_turn(backend, points)
    return backend, points, root


async def test_rewinding_two_of_three_turns_brings_back_the_second_turns_start(
    tmp_path,
) -> None:
    backend, points, root = await three_turns(tmp_path)
    later = points.points[1:]
    assert await conflicts(backend, later) == []
    done = await restore(backend, points, later, keep=set())
    assert (root / "f.txt").read_text() == "v1\n"
    assert sorted(p.name for p in root.iterdir()) == ["f.txt", "made1.txt"]
    assert done.restored == ["f.txt", "made2.txt", "made3.txt"]


async def test_a_user_change_after_the_last_turn_is_a_conflict_and_can_be_kept(
    tmp_path,
) -> None:
    backend, points, root = await three_turns(tmp_path)
    (root / "f.txt").write_text("mine\n")
    later = points.points[1:]
    assert await conflicts(backend, later) == ["f.txt"]
    done = await restore(backend, points, later, keep={"f.txt"})
    assert (root / "f.txt").read_text() == "mine\n"
    assert done.conflicts == ["f.txt"] and not (root / "made2.txt").exists()
