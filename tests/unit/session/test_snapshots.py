"""Restore points: what the scans around a command keep, and blobs stored once per content."""

from __future__ import annotations

import os
from pathlib import Path

from deepacp.backends.protocol import MAX_TEXT_BYTES
from deepacp.session.restore import RestorePoints, digest


def points_in(tmp_path: Path) -> tuple[RestorePoints, Path]:
    root = tmp_path / "workspace"
    root.mkdir()
    return RestorePoints(tmp_path / "home", "s", root), root


def age(points: RestorePoints) -> None:
    """Make every stored blob older than a sweep's grace."""
    for blob in points.blobs.folder.iterdir():
        os.utime(blob, (0, 0))


def test_a_command_s_creations_changes_and_deletions_are_kept_but_not_ignored_files(
    tmp_path,
) -> None:
    points, root = points_in(tmp_path)
    (root / ".gitignore").write_text("build/\n")
    (root / "changed.txt").write_bytes(b"before\n")
    (root / "deleted.txt").write_bytes(b"going\n")
    (root / "build").mkdir()
    (root / "build" / "out.o").write_bytes(b"old")
    points.begin("run it", "thread", None)
    stamps = points.before_command()
    (root / "changed.txt").write_bytes(b"after, and longer\n")
    (root / "deleted.txt").unlink()
    (root / "created.txt").write_bytes(b"new\n")
    (root / "build" / "out.o").write_bytes(b"newer")
    points.after_command(stamps)

    before = points.points[0].before
    assert set(before) == {"changed.txt", "deleted.txt", "created.txt"}
    assert points.blob(before["changed.txt"] or "") == b"before\n"
    assert points.blob(before["deleted.txt"] or "") == b"going\n"
    assert before["created.txt"] is None
    reloaded = RestorePoints(tmp_path / "home", "s", root)
    assert reloaded.points[0].before == before  # kept on disk as the turn goes


def test_the_first_content_of_a_turn_wins_and_too_large_files_are_reported_lost(
    tmp_path,
) -> None:
    points, root = points_in(tmp_path)
    (root / "twice.txt").write_bytes(b"first\n")
    (root / "huge.bin").write_bytes(b"x" * (MAX_TEXT_BYTES + 1))
    points.begin("run twice", "thread", None)
    for content in (b"second\n", b"third\n"):
        stamps = points.before_command()
        (root / "twice.txt").write_bytes(content)
        with (root / "huge.bin").open("ab") as handle:
            handle.write(b"y")
        points.after_command(stamps)
    point = points.points[0]
    assert points.blob(point.before["twice.txt"] or "") == b"first\n"
    assert point.lost == ["huge.bin"] and "huge.bin" not in point.before


def test_a_file_holding_a_secret_is_never_copied_and_is_reported_lost(
    tmp_path, monkeypatch
) -> None:
    token = "ghp_canary0123456789abcdefghij"
    monkeypatch.setenv("GITHUB_TOKEN", token)
    points, root = points_in(tmp_path)
    (root / "deploy.env").write_text(f"GITHUB_TOKEN={token}\n")
    points.begin("rotate", "thread", None)
    stamps = points.before_command()
    (root / "deploy.env").write_text("GITHUB_TOKEN=new\n")
    points.after_command(stamps)
    assert points.points[0].lost == ["deploy.env"]
    home = tmp_path / "home"
    assert not any(token.encode() in p.read_bytes() for p in home.rglob("*") if p.is_file())


def test_fifty_turns_rewriting_a_megabyte_file_store_each_content_once(tmp_path) -> None:
    points, _ = points_in(tmp_path)
    contents = [bytes([65 + n]) * 1_000_000 for n in range(5)]
    for turn in range(50):
        points.begin(f"turn {turn}", "thread", None)
        points.note("big.txt", points.keep("big.txt", contents[turn % 5]))
        points.finish({"big.txt": contents[(turn + 1) % 5]})
    blobs = list(points.blobs.folder.iterdir())
    stored = sum(blob.stat().st_size for blob in blobs)
    print(f"50 turns of a 1 MB file, 5 distinct contents: {stored} bytes in {len(blobs)} blobs")
    assert sorted(b.name for b in blobs) == sorted(digest(c) for c in contents)
    assert stored == 5_000_000
    for private in [*blobs, points.folder / "points.json"]:  # copies of the user's files
        assert private.stat().st_mode & 0o777 == 0o600


def test_truncating_drops_the_later_points_and_their_blobs(tmp_path) -> None:
    points, _ = points_in(tmp_path)
    for turn in range(3):
        points.begin(f"turn {turn}", "thread", f"cp{turn}")
        points.note("f.txt", points.keep("f.txt", f"v{turn}".encode()))
        points.finish({"f.txt": b"later"})
    age(points)
    points.truncate(1)
    assert [p.prompt for p in points.points] == ["turn 0"]
    assert [b.name for b in points.blobs.folder.iterdir()] == [digest(b"v0")]
    assert RestorePoints(tmp_path / "home", "s", points.root).points == points.points


def test_each_turn_s_point_is_saved_as_it_ended_while_later_turns_run(tmp_path) -> None:
    points, _ = points_in(tmp_path)
    for turn in range(3):
        points.begin(f"turn {turn}", "thread", f"cp{turn}")
        points.note("f.txt", points.keep("f.txt", f"v{turn}".encode()))
        points.lose(f"big{turn}.bin")
        points.finish({"f.txt": f"after {turn}".encode()})
    points.begin("running", "thread", "cp3")
    points.note("g.txt", None)
    reloaded = RestorePoints(tmp_path / "home", "s", points.root).points
    assert reloaded == points.points
    assert [p.after for p in reloaded[:3]] == [
        {"f.txt": digest(f"after {turn}".encode())} for turn in range(3)
    ]
    assert reloaded[3].before == {"g.txt": None} and reloaded[3].after == {}
