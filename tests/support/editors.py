"""Real editors the e2e tests drive, probed when a test first needs one, not at collection:
each probe starts an Emacs, seconds of every pytest run that collects the suite."""

from __future__ import annotations

import functools
import subprocess


@functools.cache
def with_eglot(emacs: str | None) -> str | None:
    """`emacs` if it can load eglot (built in from 29; 28 needs ELPA's: Debian's
    elpa-eglot), or None."""
    if emacs is None:
        return None
    probe = [emacs, "--batch", "-q", "--eval", "(require 'eglot)"]
    return emacs if subprocess.run(probe, capture_output=True, timeout=60).returncode == 0 else None
