"""Unified diffs of whole-file changes and of single hunks, for terminals and review."""

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


def _span(start: int, count: int) -> str:
    """A hunk header's `start,count` from a 0-based start: an empty side names the line
    before it, as `diff -u` does."""
    return f"{start + 1 if count else start},{count}"


def hunk_diff(
    path: str,
    old_lines: list[str],
    new_lines: list[str],
    old_start: int,
    new_start: int,
    *,
    created: bool = False,
    deleted: bool = False,
) -> str:
    """One hunk as a unified diff: file headers, `@@ -a,b +c,d @@`, its lines."""
    header = [
        "--- /dev/null" if created else f"--- a/{path}",
        "+++ /dev/null" if deleted else f"+++ b/{path}",
        f"@@ -{_span(old_start, len(old_lines))} +{_span(new_start, len(new_lines))} @@",
    ]
    body = [f"-{line}" for line in old_lines] + [f"+{line}" for line in new_lines]
    return "\n".join(header + [line.rstrip("\r\n") for line in body]) + "\n"
