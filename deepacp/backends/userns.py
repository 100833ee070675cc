"""Why this user cannot make the user namespaces bubblewrap needs, read from the kernel's
settings, with the fix: the reason `sandbox.sandbox_problem` gives when its probe fails."""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path

SWITCHES = (
    (
        "kernel/unprivileged_userns_clone",
        "0",
        "sudo sysctl -w kernel.unprivileged_userns_clone=1",
    ),
    ("user/max_user_namespaces", "0", "sudo sysctl -w user.max_user_namespaces=15000"),
    (
        "kernel/apparmor_restrict_unprivileged_userns",
        "1",
        "give bwrap an AppArmor profile that allows userns, or "
        "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0",
    ),
)
"""Kernel settings (under /proc/sys) that take user namespaces from ordinary users: the
value that does, and the fix."""


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def user_namespace_problem(
    bwrap: str, *, sysctl: Path = Path("/proc/sys"), uid: int | None = None
) -> str:
    """Why user `uid` (default: ours) gets no user namespace, and the fix: the kernel
    setting that forbids it where one does, else what to allow."""
    uid = os.geteuid() if uid is None else uid
    who = f"user {user_name(uid)} (uid {uid})"
    setuid = _setuid(bwrap)
    for name, value, fix in SWITCHES:
        if uid == 0 and name != "user/max_user_namespaces":
            continue  # these bind ordinary users only
        try:
            current = (sysctl / name).read_text().strip()
        except OSError:
            continue
        if current == value and not setuid:
            setting = name.replace("/", ".")
            return (
                f"allow unprivileged user namespaces: {who} may not create them "
                f"({setting} = {value}); {fix}"
            )
    return (
        f"allow unprivileged user namespaces for {who} (sysctl "
        "kernel.unprivileged_userns_clone=1, or on Ubuntu an AppArmor profile for bwrap)"
    )


def _setuid(bwrap: str) -> bool:
    """A setuid-root bwrap makes its namespaces without the user's rights."""
    try:
        return bool(os.stat(bwrap).st_mode & stat.S_ISUID)
    except OSError:
        return False
