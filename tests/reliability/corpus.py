"""Hostile paths: every one must be refused by every file tool on every backend.

Templates use `{workspace}`, `{outside}` (a sibling folder holding a secret) and `{home}`
($DEEPACP_HOME); `hostile_tree` builds the symlinks the corpus names.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.paths import DISK_ONLY, LEXICAL

SECRET = "TOP-SECRET-CONTENT"

TARGETS = ("outside/secret.txt", "outside", "outside/new.txt")
CLIMBS = (
    "../",
    "./../",
    "..//",
    ".././",
    "src/../../",
    "src/./../../",
    "a/b/../../../",
    "src//..//..//",
)
LOOKALIKE_CLIMBS = (
    "..\\",
    "\uff0e\uff0e/",  # fullwidth full stops
    "..\u2215",  # division slash
    "..\uff0f",  # fullwidth solidus
    "\u2024\u2024/",  # one dot leaders
    "\u2025/",  # two dot leader
    "..\u2044",  # fraction slash
    "..\u29f8",  # big solidus
    "..\uff3c",  # fullwidth reverse solidus
    "..\u2216",  # set minus
    "\ufe52\ufe52/",  # small full stops
    "..\u29f5",  # reverse solidus operator
)
ABSOLUTE = (
    "{outside}/secret.txt",
    "{outside}//secret.txt",
    "{outside}/./secret.txt",
    "{outside}/new.txt",
    "{outside}/",
    "{workspace}/../outside/secret.txt",
    "{workspace}/./../outside/new.txt",
    "{workspace}//../outside/secret.txt",
    "{workspace}/src/../../outside/new.txt",
    "{workspace}_evil/new.txt",
    "{workspace}/../workspace_evil/new.txt",
    "{home}/config.toml",
    "{home}/sessions.db",
    "/proc/self/environ",
    "/proc/self/cwd/../outside/secret.txt",
    "/dev/zero",
    "/etc/shadow",
    "/root/.bashrc",
    "/user/config.toml",  # $DEEPACP_HOME is routed at /user/, but only AGENTS.md and skills
    "/user/sessions.db",
    "/user/logs/deepacp.log",
    "/user/../outside/secret.txt",
    "/large_tool_results/../../outside/secret.txt",
    "/conversation_history/../../../etc/passwd",
    "/skills/bundled/../../outside/new.txt",
)
LINKS = ("link_out", "rel_out", "chain1", "src/deep/link_out", "parent", "loop_a", "etc_link")
LINK_SUFFIXES = ("", "/", "/secret.txt", "/new.txt")
INJECTED = (
    "src/app.py\x00",
    "\x00../outside/secret.txt",
    "outside\x00/secret.txt",
    "src/\x00/app.py",
    "src/app.py\n../../outside/secret.txt",
    "src/app.py\r\n",
    "\x1b[2J../outside",
    "src/\x7fapp.py",
    "\u200b../outside/secret.txt",
    "src/\u200d../../outside/new.txt",
    "\u202e../outside/secret.txt",
    "\ufeff../outside/secret.txt",
    "\u2060../outside/new.txt",
    "src/\u2028app.py",
)
WINDOWS = (
    "..\\outside\\secret.txt",
    "src\\..\\..\\outside\\new.txt",
    "C:\\Windows\\win.ini",
    "\\\\?\\C:\\Windows",
    "\\\\server\\share\\secret.txt",
    "\\\\.\\pipe\\evil",
    "\\outside\\secret.txt",
)
HOME_PATHS = ("~", "~/", "~/.ssh/id_rsa", "~root/.bashrc", "~/../outside")
NAME_TOO_LONG = "src/" + "y" * 300  # longer than a disk allows; fine in graph state
LONG = (
    "x" * 5000,
    "a/" * 3000,
    "../" * 2000,
    "src/" + "z/" * 1500 + "../" * 1600 + "outside",
)


def corpus() -> list[str]:
    paths: list[str] = [*LEXICAL, *DISK_ONLY, *ABSOLUTE, *INJECTED, *WINDOWS, *HOME_PATHS, *LONG]
    paths.append(NAME_TOO_LONG)
    for climb in CLIMBS + LOOKALIKE_CLIMBS:
        for target in TARGETS:
            paths.append(climb + target)
            paths.append(climb * 3 + target)
    for link in LINKS:
        paths.extend(link + suffix for suffix in LINK_SUFFIXES)
    return list(dict.fromkeys(paths))


def lexical_corpus() -> list[str]:
    """The part of the corpus that is hostile on any backend, not only on disk."""
    return [
        p
        for p in corpus()
        if "{" not in p and not p.startswith("/") and not _is_link(p) and p != NAME_TOO_LONG
    ]


ALL_LINKS = (*LINKS, "link_secret", "dangling", "chain2", "loop_b", "src/up")


def _is_link(path: str) -> bool:
    return any(path == link or path.startswith(link + "/") for link in ALL_LINKS)


def is_workspace_link(path: str) -> bool:
    """A path naming one of the workspace's own symlinks (not a path through one)."""
    return path.rstrip("/") in ALL_LINKS


def hostile_tree(root: Path) -> tuple[Path, Path, Path]:
    """(workspace, outside, home) under `root`, with symlinks that lead out of the workspace."""
    workspace, outside, home = root / "workspace", root / "outside", root / "home"
    (workspace / "src" / "deep").mkdir(parents=True)
    outside.mkdir()
    home.mkdir()
    (workspace / "src" / "app.py").write_text("def main():\n    return 1\n")
    (outside / "secret.txt").write_text(SECRET)
    (home / "config.toml").write_text(f'# {SECRET}\nmodel = "scripted:x"\n')
    (home / "AGENTS.md").write_text("Be brief.\n")
    links = {
        "link_out": outside,
        "rel_out": Path("../outside"),
        "chain2": outside,
        "chain1": workspace / "chain2",
        "src/deep/link_out": outside,
        "parent": root,
        "loop_a": workspace / "loop_b",
        "loop_b": workspace / "loop_a",
        "etc_link": Path("/etc"),
        "link_secret": outside / "secret.txt",
        "dangling": outside / "new-file.txt",
        "src/up": root,
    }
    for name, target in links.items():
        (workspace / name).symlink_to(target)
    return workspace, outside, home


def snapshot(root: Path, skip: Path) -> dict[str, bytes]:
    """Every file under `root` except those under `skip` (the workspace)."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_relative_to(skip) or path.is_symlink() or not path.is_file():
            continue
        out[str(path)] = path.read_bytes()
    return out
