"""The Python deepacp needs, checked first thing when it starts.

A source tree can be started on an older Python (`python3.10 -m deepacp`), where pip would
have refused to install it; this says so in one line instead of a traceback from whichever
module first uses something newer. Kept to syntax and modules every Python 3 has.
"""

import sys

REQUIRED = (3, 11)
"""The oldest Python deepacp runs on; pyproject.toml's `requires-python` says the same."""


def check_python() -> None:
    """Exit with one line on stderr when this Python is older than `REQUIRED`."""
    if tuple(sys.version_info[:2]) < REQUIRED:
        running = ".".join(str(part) for part in sys.version_info[:3])
        needed = ".".join(str(part) for part in REQUIRED)
        raise SystemExit(
            f"deepacp needs Python {needed} or newer; this is Python {running} ({sys.executable})"
        )
