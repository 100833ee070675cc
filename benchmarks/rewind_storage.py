"""What restore points store, on the path a session takes.

    python benchmarks/rewind_storage.py [--turns 50] [--files 5000]

1. A session on a scripted model, in `yolo`, whose every turn rewrites a 1 MB file (by
   `write_file` and by `execute`, alternately), cycling through 20 contents so that later
   turns write contents seen before. Prints the bytes in the shared blob store against the
   sum of the distinct contents the file held (the target: no more than that).
2. The scan before a session's first command, in a git checkout of `--files` committed
   files plus a few untracked and modified ones, and in the same tree without `.git`:
   prints the time and the bytes copied (in git, only the untracked and modified files).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from deepacp.models import resolve_model
from deepacp.session.blobs import BlobStore
from deepacp.session.lifecycle import SessionManager, Workspace
from deepacp.session.snapshots import RestorePoints
from deepacp.session.store import SessionStore

SIZE = 1_000_000
CONTENTS = 20


class Quiet:
    """A face that hears nothing and allows everything."""

    async def emit(self, event: object) -> None:
        return None

    async def ask_permission(self, request: object) -> str:
        return "allow_once"

    async def ask(self, question: object) -> None:
        return None


def content(turn: int) -> str:
    return chr(65 + turn % CONTENTS) * (SIZE - 1) + "\n"


def turns_script(count: int) -> list[dict]:
    turns = []
    for turn in range(count):
        if turn % 2:
            write = f"open('big.txt', 'w').write({content(turn)[0]!r} * {SIZE - 1} + '\\n')"
            args = {"command": f'{sys.executable} -S -c "{write}"'}
            call = {"id": f"c{turn}", "name": "execute", "args": args}
        else:
            args = {"file_path": "big.txt", "content": content(turn)}
            call = {"id": f"c{turn}", "name": "write_file", "args": args}
        turns += [{"tool_calls": [call]}, {"content": f"turn {turn} done"}]
    return turns


async def session_storage(turns: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        home, root = tmp / "home", tmp / "workspace"
        root.mkdir()
        first = "start\n"
        (root / "big.txt").write_text(first)
        script = tmp / "script.json"
        script.write_text(json.dumps({"turns": turns_script(turns)}))
        manager = SessionManager(SessionStore(home), resolve_model, sandbox="off")
        try:
            record = manager.new_record(str(root), "yolo", f"scripted:{script}")
            session = manager.open(record, Workspace(str(root)), Quiet())
            started = time.perf_counter()
            for turn in range(turns):
                if await session.prompt(f"rewrite big.txt ({turn})") != "end_turn":
                    raise SystemExit(f"turn {turn} did not end")
            elapsed = time.perf_counter() - started
            if (root / "big.txt").read_text() != content(turns - 1):
                raise SystemExit("the last turn's content is not on disk")
            held = {first, *(content(t) for t in range(turns - 1))}  # before each turn
            distinct = sum(len(c.encode()) for c in held)
            blobs = list((home / "rewind" / "blobs").iterdir())
            stored = sum(b.stat().st_size for b in blobs)
            print(f"{turns} turns rewriting a 1 MB file ({CONTENTS} contents, {elapsed:.1f} s):")
            print(f"  stored {stored:,} bytes in {len(blobs)} blobs")
            print(f"  distinct contents the file held before a turn: {distinct:,} bytes")
            print(f"  ratio {stored / distinct:.2f} (naive per-turn copies: {turns * SIZE:,})")
            await manager.delete(record.id)
            left = sum(1 for _ in (home / "rewind" / "blobs").iterdir())
            print(f"  blobs right after deleting the session: {left} (within the sweep's grace)")
        finally:
            await manager.shutdown()


def git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b"}
    env |= {"GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"}
    subprocess.run(["git", "-C", str(root), *args], env=env, check=True, capture_output=True)


def checkout(root: Path, files: int) -> None:
    for n in range(files):
        path = root / f"pkg{n % 50}" / f"module{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# module {n}\n" + f"value_{n} = {n}\n" * 120)


def baseline(root: Path, home: Path) -> tuple[float, int]:
    points = RestorePoints(home, "bench", root, BlobStore(home / "blobs", budget=2**40))
    points.begin("scan", "thread", None)
    started = time.perf_counter()
    points.before_command()
    return time.perf_counter() - started, points.blobs.used


def checkout_scan(files: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        root = tmp / "repo"
        checkout(root, files)
        size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
        git(root, "init", "-q")
        git(root, "add", ".")
        git(root, "commit", "-qm", "checkout")
        changed = 0
        for n in range(20):
            for path, text in (
                (root / f"untracked{n}.txt", f"new file {n}\n" * 50),
                (root / "pkg0" / f"module{n * 50}.py", f"# edited {n}\n"),
            ):
                changed += path.write_bytes(text.encode())
        took, copied = baseline(root, tmp / "home-git")
        print(f"baseline scan of a git checkout of {files} files ({size:,} bytes), 40 changed:")
        print(f"  {took * 1000:.0f} ms, {copied:,} bytes copied (the changed files: {changed:,})")
        subprocess.run(["rm", "-rf", str(root / ".git")], check=True)
        took, copied = baseline(root, tmp / "home-plain")
        print(f"the same tree without git: {took * 1000:.0f} ms, {copied:,} bytes copied")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--files", type=int, default=5000)
    options = parser.parse_args()
    asyncio.run(session_storage(options.turns))
    checkout_scan(options.files)


if __name__ == "__main__":
    main()
