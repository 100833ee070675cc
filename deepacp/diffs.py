"""Unified diffs of whole-file changes, for terminals and review files."""

from __future__ import annotations

import difflib


def unified_diff(path: str, old: str | None, new: str | None) -> str:
    """The unified diff from `old` to `new` (None: the file does not exist on that side)."""
    lines = difflib.unified_diff(
        (old or "").splitlines(keepends=True),
        (new or "").splitlines(keepends=True),
        "/dev/null" if old is None else f"a/{path}",
        "/dev/null" if new is None else f"b/{path}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
