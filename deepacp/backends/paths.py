"""Path validation and root confinement: the one place every backend resolves paths.

A *workspace path* is the canonical form backends work with: a POSIX path relative to the
backend's root, with no `.`/`..` segments (`""` is the root itself). Callers may pass a
relative path or an absolute path inside the root; everything else is a `PathError`.
"""

from __future__ import annotations

import os
import posixpath
import unicodedata
from pathlib import Path

from deepacp.backends.errors import PathError

MAX_PATH_CHARS = 4096

# Look-alikes of '/', '\\' and '.' that NFKC does not fold (division and fraction slash...).
_CONFUSABLES = frozenset("\u2215\u2044\u29f8\u2216\u29f5\ufe68\u2024\u2025\u2026\ufe52")


def _looks_like_separator(ch: str) -> bool:
    """True for non-ASCII characters that look like or normalize to a separator or a dot."""
    return ch in _CONFUSABLES or any(c in "/\\." for c in unicodedata.normalize("NFKC", ch))


def clean_path(path: str) -> str:
    """Validate `path` and collapse it lexically, keeping a leading `/` if present.

    Rejects NUL and control characters, invisible formatting characters, backslashes,
    characters that normalize to `/`, `\\` or `.`, `~` home paths, and relative paths that
    climb above their start.
    """
    if not isinstance(path, str):
        raise PathError(f"path must be a string, got {type(path).__name__}")
    if len(path) > MAX_PATH_CHARS:
        raise PathError(f"path is too long ({len(path)} characters; the limit is {MAX_PATH_CHARS})")
    for ch in path:
        if ch == "\\":
            raise PathError(f"{path!r}: use '/' as the path separator, not '\\'")
        category = unicodedata.category(ch)
        if category in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            raise PathError(f"{path!r} contains a control or invisible character (U+{ord(ch):04X})")
        if ord(ch) > 127 and _looks_like_separator(ch):
            raise PathError(f"{path!r} contains U+{ord(ch):04X}, which looks like a path separator")
    if path.startswith("~"):
        raise PathError(f"{path!r}: home-directory paths are outside the workspace")
    stripped = path.strip()
    if stripped in ("", "."):
        return "."
    collapsed = posixpath.normpath(stripped)
    if collapsed.startswith("//"):
        collapsed = "/" + collapsed.lstrip("/")
    if collapsed == ".." or collapsed.startswith("../"):
        raise PathError(f"{path!r} is outside the workspace")
    return collapsed


def to_workspace_path(path: str, *roots: str) -> str:
    """Return the workspace path for `path` under the first of `roots` it is in (absolute
    POSIX paths: one folder by the names it is given, say as given and resolved)."""
    cleaned = clean_path(path)
    if cleaned == ".":
        return ""
    if not cleaned.startswith("/"):
        return cleaned
    for root in (r.rstrip("/") for r in roots):
        if root == "":
            return cleaned.lstrip("/")
        if cleaned == root:
            return ""
        if cleaned.startswith(root + "/"):
            return cleaned[len(root) + 1 :]
    raise PathError(f"{path} is outside the workspace ({roots[-1].rstrip('/') or '/'})")


def confine(root: Path, workspace_path: str, *, follow_final: bool = True) -> Path:
    """Return the disk path for `workspace_path`, refusing anything that leaves `root`.

    `root` must already be resolved. Symlinks are followed (in every segment, and in the
    last one unless `follow_final` is false) and the result must stay inside `root`.
    """
    full = root / workspace_path if workspace_path else root
    if follow_final:
        real = Path(os.path.realpath(full))
    else:
        real = Path(os.path.realpath(full.parent)) / full.name if workspace_path else root
    if real != root and root not in real.parents:
        raise PathError(
            f"{workspace_path or '.'} resolves outside the workspace (through a symlink)"
        )
    # realpath leaves a link it cannot resolve (a loop) in place: refuse rather than guess.
    inside = [p for p in real.parents if root in p.parents]
    if any(p.is_symlink() for p in ([real] if follow_final else []) + inside):
        raise PathError(f"{workspace_path}: a symbolic link loop")
    return real
