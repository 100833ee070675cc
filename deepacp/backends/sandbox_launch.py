"""The short command an editor's terminal runs for a sandboxed command:
`deepacp sandbox --args FILE -- /bin/sh -c '<command>'`. Editors show (and some ask about)
the command they start; this way it is the user's command, not forty bwrap arguments with
the command cut off at the end. FILE holds bwrap and its arguments (`Sandbox.wrap`),
written privately just before and removed once read; the launcher then becomes bwrap."""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

LAUNCH = "sandbox"
USAGE = "usage: deepacp sandbox --args FILE -- COMMAND... (deepacp runs this itself)"


def launcher() -> list[str]:
    """How to start this deepacp: its script beside the Python running it, else `-m`."""
    script = Path(sys.executable).parent / "deepacp"
    if os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "deepacp"]


def launched(wrapped: Sequence[str], inner: Sequence[str]) -> tuple[list[str], Path]:
    """`wrapped` (`inner` under bwrap) as the short command the editor runs, and the file
    holding bwrap's part, to remove once the command ended (the launcher removes it first)."""
    prefix = list(wrapped[: len(wrapped) - len(inner)])
    fd, name = tempfile.mkstemp(prefix="deepacp-sandbox-", suffix=".json")  # ours alone: 0600
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        json.dump(prefix, file)
    return [*launcher(), LAUNCH, "--args", name, "--", *inner], Path(name)


def _prefix(path: Path) -> list[str]:
    """bwrap and its arguments from `path`, which must be ours and private (then removed)."""
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            raise ValueError(f"{path} is not a file of this user's")
        if info.st_mode & 0o077:
            raise ValueError(f"{path} may be changed by others")
        prefix = json.loads(path.read_text(encoding="utf-8"))
    finally:
        path.unlink(missing_ok=True)
    if (
        not isinstance(prefix, list)
        or not all(isinstance(a, str) for a in prefix)
        or len(prefix) < 2
        or not os.path.isabs(prefix[0])
        or prefix[-1] != "--"
    ):
        raise ValueError(f"{path} does not hold a sandbox command line")
    return prefix


def main(argv: Sequence[str]) -> int:
    """`deepacp sandbox --args FILE -- COMMAND...`: become the sandboxed COMMAND."""
    args = list(argv)
    if len(args) < 4 or args[0] != "--args" or args[2] != "--":
        print(USAGE, file=sys.stderr)
        return 2
    try:
        prefix = _prefix(Path(args[1]))
        os.execv(prefix[0], [*prefix, *args[3:]])
    except (OSError, ValueError) as exc:
        print(f"deepacp sandbox: the command did not run: {exc}", file=sys.stderr)
        return 126
    return 0  # not reached: execv replaced this process
