"""Running git in the workspace for restore points, outside the sandbox, right after the
agent's commands: so neither the workspace nor the repository's config is trusted.

The git run is the one `gitview.find_git` trusts (never one inside a workspace, where a
command could plant one on PATH). Its environment has no `GIT_*` variable but where the
user's config lives, and its settings turn off what a config could make it run or reach:
no fsmonitor program, no transport or lazy fetch, no filter driver (a caller lists the
configured ones and empties them: `ls-files -m` hashes a file whose stat changed, through
its clean filter), and a stat cache that compares every field. It only reads
(`GIT_OPTIONAL_LOCKS=0`).
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path

from deepacp.backends.gitview import KEPT_GIT_ENV, QUIET_GIT_ENV, find_git

HARDENED = {
    "core.fsmonitor": "false",
    "protocol.allow": "never",
    "core.trustctime": "true",
    "core.checkStat": "default",
}
FILTER_KEYS = (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false"))
TIMEOUT = 30.0
"""A git run longer than this is killed, and its answer not used."""


def without_filters(names: Sequence[str]) -> dict[str, str]:
    """Settings that turn off the filter drivers `names`."""
    return {f"filter.{name}.{key}": value for name in names for key, value in FILTER_KEYS}


class Git:
    """git, run in workspace `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def binary(self) -> str | None:
        """The git `find_git` trusts now (asked before each run: PATH, where its links
        lead and the workspaces noted in this process may have changed since)."""
        return find_git((self.root,))

    def start(
        self, args: Sequence[str], config: dict[str, str] | None = None, stdin: bool = False
    ) -> subprocess.Popen[bytes] | None:
        """git `args` started with `config` over the hardened settings; None: no git."""
        git = self.binary()
        if git is None:
            return None
        settings = {**HARDENED, **(config or {})}
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in KEPT_GIT_ENV}
        env |= QUIET_GIT_ENV | {"GIT_CONFIG_COUNT": str(len(settings))}
        for n, (key, value) in enumerate(settings.items()):
            env |= {f"GIT_CONFIG_KEY_{n}": key, f"GIT_CONFIG_VALUE_{n}": value}
        try:
            return subprocess.Popen(
                [git, *args],
                cwd=self.root,
                stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
            )
        except OSError:
            return None

    @staticmethod
    def finish(process: subprocess.Popen[bytes] | None, stdin: bytes = b"") -> tuple[int, bytes]:
        """The exit status and output of a git `start`ed (-1 when it could not run or ran
        longer than `TIMEOUT`)."""
        if process is None:
            return -1, b""
        killer = threading.Timer(TIMEOUT, process.kill)  # no polling wait: a scan is short
        killer.start()
        try:
            out, _ = process.communicate(stdin if process.stdin else None)
        except OSError:
            process.kill()
            process.wait()
            return -1, b""
        finally:
            killer.cancel()
        return (-1 if process.returncode < 0 else process.returncode), out

    def run(self, *args: str, stdin: bytes | None = None) -> bytes | None:
        """The output of git `args`; None when it fails."""
        status, out = self.finish(self.start(args, stdin=stdin is not None), stdin or b"")
        return out if status == 0 else None
