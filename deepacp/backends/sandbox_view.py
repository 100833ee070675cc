"""What of the host a sandboxed command sees besides its workspace: no home folder but a
short list of toolchains and package caches (read-only), no unix socket of another program,
and none of the variables that point at an agent.

`HostView` adds its part to the bwrap command line `sandbox.Sandbox.wrap` builds — `covering`
right after the read-only root, `closing` last — and answers from one ordered model of those
mounts whether a host path still shows through them (`shows`).
"""

from __future__ import annotations

import functools
import os
import pwd
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HOME_ALLOWED = (
    ".local/bin",
    ".local/lib",
    ".local/share/pipx",
    ".local/share/uv",
    ".local/share/mise",
    ".pyenv",
    ".rustup",
    ".cargo/bin",
    ".cargo/registry",
    ".cargo/git",
    ".nvm",
    ".volta",
    ".bun",
    ".asdf",
    ".sdkman/candidates",
    "go/bin",
    "go/pkg/mod",
    "miniconda3",
    "miniforge3",
    "anaconda3",
    ".cache/pip",
    ".cache/uv",
    ".cache/go-build",
    ".cache/yarn",
    ".npm",
    ".m2/repository",
    ".gradle/caches",
    ".gradle/wrapper",
    ".gitconfig",
    ".config/git/config",
    ".config/git/ignore",
    ".config/git/attributes",
)
"""What a sandboxed command sees of the home folder besides the workspace, read-only: the
toolchains and version managers a build runs (Python, Rust, Node, Go, Java, conda) and the
package caches it reads offline, never their credential files (`~/.cargo/credentials.toml`,
`~/.m2/settings.xml`, `~/.gradle/gradle.properties`, `~/.npmrc` lie beside these); and git's
own settings (the name and email of a commit, the global ignore file), not its credential
store. The folders on `PATH` and deepacp's own Python show too (`tool_folders`)."""
SHARED_TOOLCHAINS = ("/home/linuxbrew/.linuxbrew",)
"""Toolchains installed for everyone under /home, which is hidden as a whole."""
SYSTEM_HOMES = ("/home", "/root")
"""Every user's home folder, the user's own among them, is hidden."""
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/dev", "/proc", "/sys")
"""Never hidden as a home (the home of a system account can be `/bin` or `/`)."""
AGENT_ENV = (
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "SSH_ASKPASS",
    "GPG_AGENT_INFO",
    "GNOME_KEYRING_CONTROL",
    "DOCKER_HOST",
    "CONTAINER_HOST",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "SESSION_MANAGER",
    "TMUX",
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "KITTY_LISTEN_ON",
    "WEZTERM_UNIX_SOCKET",
    "VSCODE_IPC_HOOK_CLI",
    "VSCODE_GIT_IPC_HANDLE",
    "GIT_ASKPASS",
    "KRB5CCNAME",
)
"""Variables naming an agent, a bus, a display, an editor or a daemon that acts with the
user's rights: not passed into the sandbox (where what they name is unreachable anyway)."""

_OCTAL = re.compile(r"\\([0-7]{3})")


def _within(path: Path, folder: Path) -> bool:
    """Whether `path` is `folder` or inside it (on the strings: this runs per command)."""
    inner, outer = str(path), str(folder)
    return inner == outer or inner.startswith(outer if outer.endswith("/") else outer + "/")


def _real(path: str | Path) -> Path:
    return Path(os.path.realpath(path))


def usable_folder(path: str | Path) -> bool:
    """Whether `path` is a folder this process may list and enter; False, never an
    error, for one it cannot even look at (another user's 0700 home)."""
    return os.path.isdir(path) and os.access(path, os.R_OK | os.X_OK)


@functools.cache
def _passwd_home() -> str | None:
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        return None


def user_homes() -> list[Path]:
    """The user's home folders: `$HOME`, and the one the password database names."""
    found: dict[Path, None] = {}
    for home in (os.environ.get("HOME"), _passwd_home()):
        if home and os.path.isabs(home) and os.path.isdir(home):
            found[_real(home)] = None
    return list(found)


@functools.cache
def _system_folders() -> list[Path]:
    return [_real(p) for p in SYSTEM_FOLDERS]


def hidden_homes() -> list[Path]:
    """The home folders a command does not see: the user's and every one under
    `SYSTEM_HOMES` it could enter (root's 0700 home is left to its mode: a mount less per
    command), outermost only; never a folder that holds the system."""
    entered = [p for p in SYSTEM_HOMES if os.path.isdir(p) and os.access(p, os.X_OK)]
    candidates = {*user_homes(), *(_real(p) for p in entered)}
    system = _system_folders()
    homes = [h for h in candidates if not any(_within(h, s) or _within(s, h) for s in system)]
    return sorted(h for h in homes if not any(o != h and _within(h, o) for o in homes))


def host_sockets() -> list[Path]:
    """The unix sockets on the host's disk that a program listens on and we may connect
    to (`connect` needs write permission): those bound in this network namespace
    (`/proc/net/unix`) and those mounted in from outside it (a container's
    `docker.sock`), where they really are."""
    names: set[str] = set()
    try:
        with open("/proc/net/unix", encoding="utf-8", errors="surrogateescape") as table:
            next(table, None)
            for line in table:
                fields = line.rstrip("\n").split(None, 7)
                if len(fields) == 8 and fields[7].startswith("/"):
                    names.add(fields[7])
    except OSError:
        pass
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as mounts:
            for line in mounts:
                fields = line.split()
                if len(fields) > 4:
                    names.add(_OCTAL.sub(lambda m: chr(int(m.group(1), 8)), fields[4]))
    except OSError:
        pass
    folders: dict[str, Path] = {}  # sockets share folders: each resolved once
    found: dict[Path, None] = {}
    for name in names:
        try:
            if not stat.S_ISSOCK(os.lstat(name).st_mode) or not os.access(name, os.W_OK):
                continue
        except OSError:
            continue
        folder, base = os.path.split(name)
        if folder not in folders:
            folders[folder] = _real(folder)
        found[folders[folder] / base] = None
    return list(found)


@dataclass(frozen=True)
class _Mount:
    dest: Path
    source: Path | None = None
    """None: nothing of the host shows here (a tmpfs, a hidden path)."""
    own: bool = False
    """A workspace root: what it holds, sockets included, is the command's."""


class HostView:
    """The mounts between the read-only root and the workspace: a private `/tmp`, the
    home folders hidden, and bound back read-only what `HOME_ALLOWED` names and the tool
    folders that lie under them; `hidden` paths (credentials, `$DEEPACP_HOME`) are never
    bound back, not even through a link."""

    def __init__(
        self, roots: Sequence[Path], hidden: Sequence[Path], tools: Sequence[Path]
    ) -> None:
        self.tmp = _real("/tmp")
        self.roots = list(roots)
        self.homes = [
            h
            for h in hidden_homes()
            if not any(_within(h, r) for r in roots) and not _within(h, self.tmp)
        ]
        self._mounts = [
            _Mount(Path("/"), Path("/")),
            _Mount(Path("/dev")),
            _Mount(Path("/proc")),
            _Mount(self.tmp),
            *(_Mount(h) for h in self.homes),
        ]
        self.links = {  # a home reached through a link (/home/u -> /data/u) keeps its path
            Path(home): real
            for home in (os.environ.get("HOME"), _passwd_home())
            if home and os.path.isabs(home)
            for real in [_real(home)]
            if real != Path(home) and os.path.isdir(real) and not self.shows(Path(home))
        }
        mine = user_homes()
        covered = {self.tmp, *self.homes, *mine}
        allowed = [f"{h}/{entry}" for h in mine for entry in HOME_ALLOWED]
        allowed += SHARED_TOOLCHAINS
        wanted = [(_real(p), Path(p)) for p in allowed if os.path.lexists(p)]
        wanted += [(t, t) for t in tools]
        self.binds: list[tuple[Path, Path]] = []
        for source, dest in wanted:
            if dest in covered or not os.path.exists(source) or self.shows(dest):
                continue
            if any(_within(source, h) or (source != dest and _within(h, source)) for h in hidden):
                continue
            self.binds.append((source, dest))
            self._mounts.append(_Mount(dest, source))

    def shows(self, path: Path) -> bool:
        """Whether something of the host shows at `path` through the mounts so far."""
        return _top(self._mounts, path).source is not None

    def covering(self) -> list[str]:
        """bwrap's arguments, right after the private `/tmp`: the homes hidden, and what is
        bound back."""
        args: list[str] = []
        for home in self.homes:
            args += ["--tmpfs", str(home)]
        for home, real in self.links.items():
            args += ["--symlink", str(real), str(home)]
        for source, dest in self.binds:
            args += ["--ro-bind", str(source), str(dest)]
        return args

    def closing(self, outside: Sequence[Path], inside: Sequence[Path]) -> list[str]:
        """bwrap's last arguments, once the roots are bound (the `outside` and `inside`
        hidden paths hidden before and after them): the homes made read-only, every host
        socket that still shows outside the roots covered, the agent variables unset."""
        mounts = [
            *self._mounts,
            *(_Mount(p) for p in outside),
            *(_Mount(r, r, own=True) for r in self.roots),
            *(_Mount(p) for p in inside),
        ]
        args: list[str] = []
        for home in self.homes:
            args += ["--remount-ro", str(home)]
        for at in _shown_sockets(mounts, host_sockets()):
            args += ["--ro-bind", "/dev/null", str(at)]
        for name in AGENT_ENV:
            args += ["--unsetenv", name]
        return args


def _top(mounts: Sequence[_Mount], path: Path) -> _Mount:
    """The mount that decides what shows at `path`: the last one over it."""
    return next(m for m in reversed(mounts) if _within(path, m.dest))


def _shown_sockets(mounts: Sequence[_Mount], sockets: Sequence[Path]) -> list[Path]:
    """Where in the sandbox each of `sockets` shows, outside the workspace roots."""
    found: dict[Path, None] = {}
    for socket in sockets:
        for mount in mounts:
            if mount.source is None or mount.own or not _within(socket, mount.source):
                continue
            at = mount.dest / socket.relative_to(mount.source)
            if _top(mounts, at) is mount:
                found[at] = None
    return list(found)
