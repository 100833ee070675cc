"""The command sandbox: bubblewrap (`bwrap`) on Linux, a real isolation tool, never a filter.

Under a policy other than `off`, a command runs in its own mount, PID, IPC, UTS and (unless
the policy allows the network) network namespaces, with every capability dropped and
`no_new_privs` set (a setuid binary gains nothing): the whole filesystem read-only, the
workspace read-write (`read-only`: read-only too), a private `/tmp` of bounded size, a
fresh `/dev` and `/proc`, and `$DEEPACP_HOME`, the credential stores of `CREDENTIAL_PATHS`
and the sockets under `/run` not there at all; the home folders, other programs' sockets
and the agent variables as `sandbox_view` says. When the command's process group is killed
(cancel, timeout, or the server's lifeline, see `shell.lifeline`) bwrap dies, and with it
the namespace's first process: the kernel then kills every process left in the
namespace, daemons that left the process group included.

Where bwrap is missing or cannot make namespaces, `sandbox_problem` says why and commands
run unsandboxed (`effective` is then `off`), which the session tells the user.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from deepacp.backends.errors import BackendError
from deepacp.backends.guard import Guard, GuardBreach, guard_of
from deepacp.backends.programs import note_workspace, trusted_program
from deepacp.backends.sandbox_view import HostView, usable_folder
from deepacp.backends.userns import user_namespace_problem

SandboxPolicy = Literal["workspace-write", "workspace-write+network", "read-only", "off"]
POLICIES: tuple[SandboxPolicy, ...] = (
    "workspace-write",
    "workspace-write+network",
    "read-only",
    "off",
)
DEFAULT_POLICY: SandboxPolicy = "workspace-write"
POLICY_DESCRIPTIONS: dict[SandboxPolicy, str] = {
    "workspace-write": "Commands write only the workspace; no network, credentials hidden",
    "workspace-write+network": "Commands write only the workspace; network allowed",
    "read-only": "Commands write nothing but a private /tmp; no network",
    "off": "Commands run with your full rights (approvals are the only guard)",
}
QUIET_POLICIES: frozenset[SandboxPolicy] = frozenset({"workspace-write"})
"""Policies under which accept-edits mode runs commands without asking: they may change
the workspace (as the accepted edits do), but not its `GUARDED_PATHS`, and nothing else.
`read-only` is chosen to keep commands from changing anything, so there they still ask."""

CREDENTIAL_PATHS = (
    ".ssh",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".docker",
    ".kube",
    ".gnupg",
    ".password-store",
    ".local/share/keyrings",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".my.cnf",
    ".vault-token",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".terraform.d/credentials.tfrc.json",
)
"""Credential stores under the home folder that a sandboxed command never sees."""
HIDDEN_SYSTEM_PATHS = ("/run", "/var/run")
"""Sockets to other programs (ssh-agent, D-Bus and its keyrings, docker.sock) live here:
a read-only mount does not stop `connect`, so they are not mounted at all."""
PRIVATE_TMP_BYTES = 1 << 30
"""The private /tmp is memory; its size is bounded so a command cannot fill it without end."""
SANDBOX_ENV = {"TMPDIR": "/tmp"}

_FILE_SIGNS = re.compile(
    r"Read-only file system|Permission denied|Operation not permitted|No space left on device"
    r"|EROFS|EACCES|EPERM|ENOSPC"
)
_NETWORK_SIGNS = re.compile(
    r"Network is unreachable|Connection refused|Temporary failure in name resolution"
    r"|Could not resolve|Name or service not known|ENETUNREACH|ECONNREFUSED|EAI_AGAIN"
    r"|getaddrinfo"
)


def parse_policy(value: object) -> SandboxPolicy:
    """`value` as a sandbox policy, or a ValueError naming the policies there are."""
    for policy in POLICIES:
        if value == policy:
            return policy
    raise ValueError(f"unknown sandbox policy {value!r}; the policies are {', '.join(POLICIES)}")


def _bwrap(roots: Sequence[Path] = ()) -> str | None:
    """The bwrap to run: never one a command could have planted (`trusted_program`)."""
    return trusted_program("bwrap", roots)


@functools.cache
def sandbox_problem() -> str | None:
    """Why commands cannot be sandboxed on this machine (with the fix), or None when
    bubblewrap works. Checked once per process, by starting a real sandbox."""
    if sys.platform != "linux":
        return f"no sandbox on this platform ({sys.platform}): bubblewrap runs on Linux only"
    bwrap = _bwrap()
    if bwrap is None:
        install = "(Debian/Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap)"
        if found := shutil.which("bwrap"):
            return (
                f"the bwrap on PATH ({found}) is in a workspace or may be changed by another "
                f"user: install bubblewrap where only root can change it {install}"
            )
        return f"bwrap is not installed: install bubblewrap {install}"
    probe = [bwrap, *_isolation(network=False), "--ro-bind", "/", "/", "--", "/bin/true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not start: {exc}"
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
        return f"bwrap cannot create namespaces here ({reason}): {user_namespace_problem(bwrap)}"
    return None


def _isolation(*, network: bool) -> list[str]:
    shared = ["--share-net"] if network else []
    return [
        "--unshare-all",
        *shared,
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
    ]


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _hide(path: Path) -> list[str]:
    if path.is_dir():
        return ["--tmpfs", str(path)]
    return ["--ro-bind", "/dev/null", str(path)]


def _resolv_conf() -> list[str]:
    """/etc/resolv.conf often links into /run, which is hidden: keep that one file."""
    target = Path("/etc/resolv.conf").resolve()
    if target.is_file() and any(_within(target, Path(p).resolve()) for p in HIDDEN_SYSTEM_PATHS):
        return ["--ro-bind", str(target), str(target)]
    return []


@dataclass
class SandboxSetting:
    """A session's sandbox policy, read live by its shell and its approval gate."""

    policy: SandboxPolicy = DEFAULT_POLICY
    unasked: bool = False
    """Whether commands under a `QUIET_POLICIES` policy run without asking (accept-edits):
    then their `GUARDED_PATHS` are guarded."""
    breach: GuardBreach = field(default_factory=GuardBreach)
    """What the guard could not undo after such a command: the next command is asked."""

    @property
    def effective(self) -> SandboxPolicy:
        """The policy commands really run under: `off` where bubblewrap does not work."""
        return "off" if self.policy == "off" or sandbox_problem() else self.policy


@dataclass(frozen=True)
class Sandbox:
    """How the commands of the workspace `root` are confined: `extra_roots` are more
    workspace folders (writable like the root), `hidden` more paths they must not see
    (`$DEEPACP_HOME`)."""

    root: Path
    setting: SandboxSetting
    hidden: tuple[Path, ...] = ()
    extra_roots: tuple[Path, ...] = ()

    def __post_init__(self) -> None:
        note_workspace([self.root, *self.extra_roots])  # no program is taken from them

    def roots(self) -> list[Path]:
        """The workspace roots the commands write (links resolved): the root and the extra
        roots this process may look into (never an error for one it may not)."""
        extra = (r.resolve() for r in self.extra_roots if usable_folder(r))
        return [self.root.resolve(), *extra]

    def hidden_paths(self) -> list[Path]:
        """Every existing path to hide, where its links lead (so a link cannot reveal it)."""
        home = Path.home()
        candidates = [*(home / p for p in CREDENTIAL_PATHS), *self.hidden]
        candidates += [Path(p) for p in HIDDEN_SYSTEM_PATHS]
        found: dict[Path, None] = {}
        for path in candidates:
            if os.path.exists(path):
                found[Path(os.path.realpath(path))] = None
        return list(found)

    def guard(self, policy: SandboxPolicy, *, hook: bool = False) -> Guard | None:
        """The guard of a command that runs under `policy` without asking (None: asked).
        A `hook` is never asked, so it is guarded whenever it can write the workspace: it
        may run what the agent wrote (a Makefile)."""
        unasked = hook or (self.setting.unasked and policy in QUIET_POLICIES)
        if not unasked or policy in ("off", "read-only"):
            return None
        return guard_of(self.roots(), self.setting.breach)

    def wrap(
        self, argv: Sequence[str], policy: SandboxPolicy, guard: Guard | None = None
    ) -> list[str]:
        """`argv` run under `policy` (`argv` itself for `off`), with `guard`'s paths
        read-only; a `BackendError` when no bwrap may run now (the command does not run)."""
        if policy == "off":
            return list(argv)
        roots = self.roots()
        root = roots[0]
        bwrap = _bwrap(roots)
        if bwrap is None:
            raise BackendError(
                "the command did not run: there is no bwrap to sandbox it now that only root "
                "or you can change, outside the workspace (none is run from anywhere else)"
            )
        hidden = self.hidden_paths()
        view = HostView(roots, hidden, _tool_folders())
        inside = [p for p in hidden if any(_within(p, r) and p != r for r in roots)]
        outside = [p for p in hidden if p not in inside and view.shows(p)]
        args = [bwrap, *_isolation(network=policy == "workspace-write+network")]
        args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        args += ["--size", str(PRIVATE_TMP_BYTES), "--tmpfs", str(view.tmp)]
        args += view.covering()
        for path in outside:
            args += _hide(path)
        if policy == "workspace-write+network":
            args += _resolv_conf()
        for folder in roots:
            args += ["--ro-bind" if policy == "read-only" else "--bind", str(folder), str(folder)]
        for path in inside:
            args += _hide(path)
        if guard is not None:
            for path in guard.anchors(roots):
                args += ["--bind", str(path), str(path)]
            for path in guard.bound:
                args += ["--ro-bind", str(path), str(path)]
        args += view.closing(outside, inside)
        for name, value in SANDBOX_ENV.items():
            args += ["--setenv", name, value]
        return [*args, "--chdir", str(root), "--", *argv]


def _tool_folders() -> list[Path]:
    """Where the commands' tools live: deepacp's own Python environment and the PATH, but
    for a folder we cannot read. Kept visible (read-only) where the sandbox hides what holds
    them (the host's /tmp, a home folder)."""
    found: dict[Path, None] = {}
    for entry in [sys.prefix, sys.base_prefix, *os.environ.get("PATH", "").split(os.pathsep)]:
        if entry and usable_folder(entry):
            found[Path(entry).resolve()] = None
    return list(found)


def failure_hint(output: str, policy: SandboxPolicy) -> str | None:
    """What to tell the model when a command that failed under `policy` looks like it hit
    the sandbox (None when it does not, or nothing was sandboxed)."""
    network_off = policy != "workspace-write+network"
    signs = _FILE_SIGNS.search(output) or (network_off and _NETWORK_SIGNS.search(output))
    if policy == "off" or not signs:
        return None
    return (
        f"[sandbox: this may have failed because of the sandbox (policy {policy}: "
        f"{POLICY_DESCRIPTIONS[policy].lower()}; /tmp is private; a command that runs "
        "without asking sees git's hooks and config and editor settings read-only). If "
        "the command really "
        "needs more, call execute again with outside_sandbox=true: the user is asked "
        "before it runs outside the sandbox.]"
    )
