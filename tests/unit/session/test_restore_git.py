"""Restore points in a git checkout: git says what a command changed (its index and stat
cache, never a walk of every file), and each file comes back byte for byte, whatever git
itself was told to do by the command."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from deepacp.backends import FilesystemBackend
from deepacp.backends.protocol import ShellCommand
from deepacp.backends.shell import LocalShell
from deepacp.session.restore import RestorePoints, ScanningShell, restore
from deepacp.session.restore import points as points_module

ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
ENV |= {"GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_NOSYSTEM": "1"}


def git(root: Path, *args: str) -> str:
    env = {**os.environ, **ENV, "HOME": str(root.parent)}
    done = subprocess.run(["git", "-C", str(root), *args], env=env, capture_output=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode()


def write(root: Path, files: dict[str, bytes]) -> None:
    """Write `files`, dated an hour ago (a checkout git has long cached the stat of)."""
    hour_ago = time.time() - 3600
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.utime(path, (hour_ago, hour_ago))


def committed(root: Path, files: dict[str, bytes]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    write(root, files)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-qm", "start")
    return root


def tree(root: Path) -> dict[str, bytes]:
    """Every file under `root` but git's own, and its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return committed(
        tmp_path / "ws",
        {
            "a.txt": b"a committed\n",
            "b.txt": b"b committed\n",
            "src/c.py": b"C = 1\n",
            "crlf.bin": b"raw\r\nbytes\x00\n",
            ".gitignore": b"build/\n",
        },
    )


async def command(root: Path, tmp_path: Path, line: str) -> RestorePoints:
    """A turn whose one command is `line`; its restore point."""
    points = RestorePoints(tmp_path / "home", uuid.uuid4().hex, root)
    points.begin("run", "thread", None)
    shell = ScanningShell(LocalShell(root), points, FilesystemBackend(root))
    env = " ".join(f"{k}={v}" for k, v in ENV.items())
    result = await shell.execute(ShellCommand(f"export {env}; {line}"))
    assert result.exit_code == 0, result.output
    return points


async def rewound(points: RestorePoints, root: Path) -> None:
    done = await restore(FilesystemBackend(root), points, points.points, keep=set())
    assert not done.lost and not done.failed, done


async def test_a_commands_edits_creations_deletions_and_renames_come_back(
    repo: Path, tmp_path: Path
) -> None:
    before = tree(repo)
    points = await command(
        repo,
        tmp_path,
        "echo edited > a.txt; rm src/c.py; echo new > new.txt; git mv b.txt moved.txt; "
        "mv crlf.bin renamed.bin; mkdir build; echo out > build/out.o",
    )
    point = points.points[0]
    assert set(point.before) == {"a.txt", "src/c.py", "new.txt", "b.txt", "moved.txt"} | {
        "crlf.bin",
        "renamed.bin",
    }
    assert point.before["new.txt"] is None and point.before["moved.txt"] is None
    assert len(point.git) == 4  # each committed content kept as its git object: no copy
    assert not points.blobs.folder.exists() or not any(points.blobs.folder.iterdir())
    await rewound(points, repo)
    assert tree(repo) == {**before, "build/out.o": b"out\n"}  # ignored: not a restore's


async def test_untracked_and_staged_then_modified_files_keep_their_bytes(
    repo: Path, tmp_path: Path
) -> None:
    write(repo, {"a.txt": b"staged\n"})
    git(repo, "add", "a.txt")
    write(repo, {"a.txt": b"staged, then edited\n", "notes.txt": b"untracked\n"})
    before = tree(repo)
    points = await command(repo, tmp_path, "echo x > a.txt; echo y > notes.txt")
    copied = {b.read_bytes() for b in points.blobs.folder.iterdir()}
    assert copied == {b"staged, then edited\n", b"untracked\n"}  # neither is git's
    await rewound(points, repo)
    assert tree(repo) == before
    assert git(repo, "show", ":a.txt") == "staged\n"  # the index is not a restore's


async def test_a_command_that_checks_out_another_branch_is_taken_back(
    repo: Path, tmp_path: Path
) -> None:
    git(repo, "checkout", "-qb", "other")
    write(repo, {"a.txt": b"other's a\n", "only-other.txt": b"o\n"})
    git(repo, "rm", "-q", "src/c.py")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "other")
    git(repo, "checkout", "-q", "main")
    write(repo, {"b.txt": b"dirty b\n"})
    before = tree(repo)
    points = await command(repo, tmp_path, "git stash -q && git checkout -q other")
    assert set(points.points[0].before) == {"a.txt", "b.txt", "only-other.txt", "src/c.py"}
    await rewound(points, repo)
    assert tree(repo) == before


async def test_a_command_that_removes_or_makes_the_repository_notes_only_what_changed(
    repo: Path, tmp_path: Path
) -> None:
    points = await command(repo, tmp_path, "rm -rf .git; echo e > a.txt")
    assert points.points[0].lost == ["a.txt"]  # its git object went with the repository
    assert points.points[0].before == {}
    plain = tmp_path / "plain"
    write(plain, {"f.txt": b"f\n", "g.txt": b"g\n"})
    points = await command(plain, tmp_path, "git init -q && git add . && git commit -qm x")
    assert points.points[0].before == {}


async def test_a_repository_with_no_commits(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write(root, {"staged.txt": b"staged\n", "loose.txt": b"loose\n"})
    git(root, "init", "-q")
    git(root, "add", "staged.txt")
    before = tree(root)
    points = await command(root, tmp_path, "echo 1 > staged.txt; rm loose.txt; echo 2 > n")
    assert set(points.points[0].before) == {"staged.txt", "loose.txt", "n"}
    await rewound(points, root)
    assert tree(root) == before


def add_submodule(repo: Path) -> None:
    """A repository vendor/ (lib.py) inside `repo`, added as a gitlink, as a submodule is."""
    committed(repo / "vendor", {"lib.py": b"LIB = 1\n"})
    git(repo, "add", "vendor")


async def test_another_repository_inside_and_a_submodule_are_walked(
    repo: Path, tmp_path: Path
) -> None:
    add_submodule(repo)
    committed(repo / "nested", {"n.py": b"N = 1\n"})  # untracked: git does not look in
    before = tree(repo)
    points = await command(repo, tmp_path, "echo 2 > vendor/lib.py; echo 3 > nested/n.py")
    assert set(points.points[0].before) == {"vendor/lib.py", "nested/n.py"}
    await rewound(points, repo)
    assert tree(repo) == before


async def test_a_submodule_swapped_for_a_link_outside_is_not_looked_into(
    repo: Path, tmp_path: Path
) -> None:
    add_submodule(repo)
    write(tmp_path / "outside", {"secret.txt": b"not the workspace's\n"})
    points = await command(
        repo, tmp_path, f"rm -rf vendor && ln -s {tmp_path / 'outside'} vendor && echo x > a.txt"
    )
    point = points.points[0]
    assert set(point.before) == {"a.txt", "vendor/lib.py"} and point.lost == []
    kept = [f.read_bytes() for f in (tmp_path / "home").rglob("*") if f.is_file()]
    assert not any(b"not the workspace" in data or b"secret.txt" in data for data in kept)


async def test_a_workspace_in_a_repositorys_subfolder_or_ignored_folder(tmp_path: Path) -> None:
    top = committed(
        tmp_path / "top",
        {"pkg/x.py": b"X = 1\n", "out/keep.txt": b"k\n", ".gitignore": b"out/\n"},
    )
    git(top, "add", "-f", "out/keep.txt")
    git(top, "commit", "-qm", "keep")
    pkg, out = top / "pkg", top / "out"
    points = await command(pkg, tmp_path, "echo 2 > x.py; echo y > y.py")
    before = points.points[0].before
    assert set(before) == {"x.py", "y.py"} and before["y.py"] is None
    assert points.points[0].git  # seen through git, paths relative to the workspace
    points = await command(out, tmp_path, "echo 2 > keep.txt; echo z > z.txt")
    assert set(points.points[0].before) == {"keep.txt", "z.txt"}  # all ignored: walked


async def test_only_the_files_git_says_changed_are_read_before_a_command(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(repo, {f"many/{n}.txt": f"{n}\n".encode() for n in range(200)})
    git(repo, "add", "many")
    git(repo, "commit", "-qm", "many")
    write(repo, {"a.txt": b"dirty\n", "untracked.txt": b"u\n"})
    read: list[str] = []
    original = points_module.read_file

    def counted(root: Path, path: str, limit: int) -> bytes:
        read.append(path)
        return original(root, path, limit)

    monkeypatch.setattr(points_module, "read_file", counted)
    points = await command(repo, tmp_path, "echo changed > many/7.txt")
    assert sorted(read) == ["a.txt", "untracked.txt"]
    assert list(points.points[0].before) == ["many/7.txt"]


async def test_bytes_git_converts_on_checkout_are_kept_as_they_were(tmp_path: Path) -> None:
    root = committed(tmp_path / "ws", {".gitattributes": b"*.txt text eol=crlf\n"})
    write(tmp_path / "src", {"f.txt": b"one\ntwo\n"})
    git(root, "--work-tree", str(tmp_path / "src"), "add", "f.txt")
    git(root, "commit", "-qm", "f")
    git(root, "checkout", "-q", "--", "f.txt")  # written with CRLF; the object has LF
    write(root, {"f.txt": b"one\r\ntwo\r\n"})
    git(root, "update-index", "-q", "--refresh")  # git now trusts its stat of the CRLF file
    points = await command(root, tmp_path, "printf 'x' > f.txt")
    await rewound(points, root)
    assert (root / "f.txt").read_bytes() == b"one\r\ntwo\r\n"


async def test_a_git_planted_in_the_workspace_on_path_never_runs(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = tmp_path / "planted-git-ran"
    script = f'#!/bin/sh\ntouch {ran}\nexec {shutil.which("git")} "$@"\n'
    write(repo, {"bin/git": script.encode()})
    (repo / "bin" / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{repo / 'bin'}{os.pathsep}{os.environ['PATH']}")
    points = await command(repo, tmp_path, "/bin/echo changed > a.txt")
    assert points.points[0].git  # git was asked: the one outside the workspace
    await rewound(points, repo)
    assert not ran.exists()


async def test_a_filter_the_repository_config_names_never_runs(repo: Path, tmp_path: Path) -> None:
    ran = tmp_path / "filter-ran"
    write(repo, {".gitattributes": b"* filter=planted\n"})
    git(repo, "config", "filter.planted.clean", f"touch {ran}; cat")
    git(repo, "config", "filter.planted.required", "true")
    os.utime(repo / "a.txt")  # its stat changed, not its bytes: git hashes it
    points = await command(repo, tmp_path, "echo changed > b.txt")
    assert set(points.points[0].before) == {"b.txt"}
    assert not ran.exists()


async def test_a_command_that_changes_hundreds_of_files_is_taken_back(tmp_path: Path) -> None:
    root = committed(tmp_path / "ws", {f"d{n % 10}/{n}.txt": b"%d\n" % n for n in range(200)})
    before = tree(root)
    script = "import pathlib\nfor n in range(200):\n"
    script += "    pathlib.Path(f'd{n % 10}/{n}.txt').write_text('changed')\n"
    script += "    pathlib.Path(f'new{n % 7}').mkdir(exist_ok=True)\n"
    script += "    pathlib.Path(f'new{n % 7}/{n}.txt').write_text('made')\n"
    (tmp_path / "change.py").write_text(script)
    points = await command(root, tmp_path, f"python3 {tmp_path / 'change.py'}")
    assert len(points.points[0].before) == 400
    await rewound(points, root)
    assert tree(root) == before
