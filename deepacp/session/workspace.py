"""The files an editor session works on: the workspace (through the editor when it can),
extra workspace roots, and routed folders outside the project. Light to import: it is used
before the harness has loaded (to list skills for slash commands)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Protocol

from deepacp.backends import (
    CompositeBackend,
    EditorBackend,
    EditorClient,
    FilesystemBackend,
    LocalShellBackend,
    PermissionBackend,
    PermissionRule,
)
from deepacp.backends.editor_review import EditorReview
from deepacp.backends.protocol import Backend
from deepacp.backends.sandbox import SandboxSetting
from deepacp.harness import HISTORY_DIR, LARGE_RESULTS_DIR, MEMORY_FILE
from deepacp.private import private_dir

USER_DIR = "/user/"
BUNDLED_SKILLS_DIR = "/skills/bundled/"
MEMORY_SOURCES = (f"{USER_DIR}{MEMORY_FILE}", MEMORY_FILE)
SKILL_SOURCES = (BUNDLED_SKILLS_DIR, f"{USER_DIR}skills", ".deepacp/skills", ".agents/skills")

# Of $DEEPACP_HOME the agent sees only the user's AGENTS.md and skills (not the sessions).
USER_DIR_RULES = [
    PermissionRule(("read", "write"), ("/AGENTS.md",), "allow"),
    PermissionRule(("read",), ("/skills/**",), "allow"),
    PermissionRule(("read", "write"), ("/**",), "deny"),
]
READ_ONLY = [PermissionRule(("write",), ("/**",), "deny")]


def bundled_skills() -> Path:
    return Path(str(files("deepacp") / "_skills"))


WorkspaceView = Callable[[FilesystemBackend], Backend]
"""How a face lets the agent see the workspace: through the editor, or as an overlay."""


class ReviewSource(Protocol):
    """What the user did in review to the agent's changes, as a note for the model."""

    async def note(self) -> str | None:
        """What the model has not been told yet (None: nothing)."""
        ...

    def forget_all(self) -> None:
        """A fresh conversation: the model knows of no earlier change."""
        ...


def through_editor(editor: EditorClient, review: EditorReview | None = None) -> WorkspaceView:
    return lambda disk: EditorBackend(disk, editor, review)


def session_backend(
    cwd: str,
    scratch: Path,
    home: Path,
    *,
    view: WorkspaceView | None = None,
    extra_roots: Sequence[str] = (),
    sandbox: SandboxSetting | None = None,
    recorded: Callable[[Backend], Backend] | None = None,
    remote: Backend | None = None,
) -> Backend:
    """The workspace with a shell — seen through `view` (the editor's files and terminal,
    or an overlay) — plus: extra roots (reached by their absolute paths), the session's
    scratch space under $DEEPACP_HOME (offloaded text never lands in the project), the
    user's memory and skills (`/user/`), and the bundled skills, read-only. Commands run
    in `sandbox`, where the extra roots are writable like the workspace and $DEEPACP_HOME
    is out of sight. `recorded` wraps the workspace (not the rest) to record its changes.
    A `remote` workspace (`RemoteBackend`) stands instead of the local
    one and its extra roots, its files and commands on its machine: never seen through
    the editor, whose files and terminal are on another machine."""

    def seen(backend: FilesystemBackend) -> Backend:
        return view(backend) if view is not None else backend

    routes: dict[str, Backend] = {}
    for root in extra_roots if remote is None else ():
        routes[root] = seen(FilesystemBackend(root, hidden=(home,)))
    for prefix in (LARGE_RESULTS_DIR, HISTORY_DIR):
        folder = scratch / prefix.strip("/")
        private_dir(folder)
        routes[prefix] = FilesystemBackend(folder)
    routes[USER_DIR] = PermissionBackend(FilesystemBackend(home), USER_DIR_RULES)
    routes[BUNDLED_SKILLS_DIR] = PermissionBackend(FilesystemBackend(bundled_skills()), READ_ONLY)
    # $DEEPACP_HOME is reachable only through /user/, even inside the workspace (cwd ~).
    extra = [Path(root) for root in extra_roots]
    if remote is not None:
        return CompositeBackend(remote, routes)
    workspace = LocalShellBackend(cwd, hidden=(home,), sandbox=sandbox, extra_roots=extra)
    default = seen(workspace)
    return CompositeBackend(recorded(default) if recorded else default, routes)


def watched_skill_dirs(cwd: str, home: Path) -> list[Path]:
    """Existing folders whose changes can change the skills (and so the slash commands)."""
    candidates = [Path(cwd) / ".deepacp", Path(cwd) / ".agents", home / "skills"]
    return [folder for folder in candidates if folder.is_dir()]
