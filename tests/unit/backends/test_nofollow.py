"""Reads and writes of a resolved workspace path follow no link (`nofollow`, `atomic`),
and a file deepacp reads for itself is read only if it is a regular one (`regular`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deepacp.backends.atomic import replace_file
from deepacp.backends.errors import BackendError, NotFoundError, PathError
from deepacp.backends.nofollow import read_file
from deepacp.regular import FileTooLarge, NotRegularFile, read_regular


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "src").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret").write_bytes(b"secret")
    (root / "src" / "a.bin").write_bytes(b"\xff a")
    return root, outside


def test_reads_a_regular_file_and_nothing_else(layout) -> None:
    root, outside = layout
    assert read_file(root, "src/a.bin", 100) == b"\xff a"
    (root / "link").symlink_to(outside / "secret")
    (root / "swapped").symlink_to(outside)
    os.mkfifo(root / "fifo")
    with pytest.raises(PathError):
        read_file(root, "link", 100)
    with pytest.raises(PathError):
        read_file(root, "swapped/secret", 100)
    with pytest.raises(BackendError, match="not a regular file"):
        read_file(root, "fifo", 100)  # and does not wait for a writer
    with pytest.raises(BackendError, match="larger than 2 bytes"):
        read_file(root, "src/a.bin", 2)
    with pytest.raises(NotFoundError):
        read_file(root, "src/none", 100)


def test_a_replacement_follows_no_link(layout) -> None:
    root, outside = layout
    (root / "src" / "a.bin").chmod(0o755)
    (root / "src" / ".a.bin.rewind.tmp").symlink_to(outside / "planted")
    replace_file(root, "src/a.bin", b"new")
    assert (root / "src" / "a.bin").read_bytes() == b"new"
    assert (root / "src" / "a.bin").stat().st_mode & 0o777 == 0o755
    assert sorted(p.name for p in (root / "src").iterdir()) == [".a.bin.rewind.tmp", "a.bin"]

    (root / "link").symlink_to(outside / "secret")
    replace_file(root, "link", b"mine")  # the link is replaced, its target untouched
    assert not (root / "link").is_symlink() and (outside / "secret").read_bytes() == b"secret"

    (root / "lib").symlink_to(outside)
    with pytest.raises(PathError):
        replace_file(root, "lib/new.bin", b"x")
    replace_file(root, "made/deep/new.bin", b"x")  # missing folders are made
    assert (root / "made" / "deep" / "new.bin").read_bytes() == b"x"
    assert sorted(p.name for p in outside.iterdir()) == ["secret"]


def test_a_file_read_for_itself_is_a_regular_file(tmp_path: Path) -> None:
    (tmp_path / "zero").symlink_to("/dev/zero")
    (tmp_path / "stdin").symlink_to("/dev/stdin")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "big").write_bytes(b"x" * 11)
    (tmp_path / "ok").symlink_to(tmp_path / "big")  # a link to a regular file is read
    for name in ("zero", "stdin", "fifo"):
        with pytest.raises(NotRegularFile):
            read_regular(tmp_path / name, 100)
    with pytest.raises(FileTooLarge):
        read_regular(tmp_path / "big", 10)
    assert read_regular(tmp_path / "ok", 11) == b"x" * 11
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "none", 10)
