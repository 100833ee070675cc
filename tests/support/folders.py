"""Folders the sandbox tests plant targets in, outside the workspace."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def var_tmp(prefix: str, mode: int | None = None) -> Iterator[Path]:
    """A new folder under /var/tmp, removed afterwards. Not under /tmp: the sandbox makes
    its /tmp private, which would hide a target for a reason a real folder does not have.
    `mode` (e.g. 0o755) lets the ordinary user of the tests in."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
    if mode is not None:
        folder.chmod(mode)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
