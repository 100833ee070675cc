"""The session runtime: one agent thread, its mode and approvals, driven turn by turn.

Its public names, the only ones the faces import (`from deepacp.session import X`,
`tests/unit/test_layers.py`). Lazy: importing this package loads nothing; a name loads its
home module on first use, so the ACP quick load and `initialize` stay light."""

from typing import TYPE_CHECKING

from deepacp.lazy import homes_of, lazy_names

if TYPE_CHECKING:
    from deepacp.session.assembly import import_harness
    from deepacp.session.core import Session
    from deepacp.session.hosts.local import Ready, no_wait
    from deepacp.session.hosts.threads import TOKEN_VARIABLE, ServerThreads, token_headers
    from deepacp.session.lifecycle import SessionManager, Workspace
    from deepacp.session.mcp import McpServer
    from deepacp.session.modes import DEFAULT_MODE, MODES, Mode, parse_mode
    from deepacp.session.parts.profile import ProfilePart
    from deepacp.session.parts.restore import RestorePart
    from deepacp.session.parts.sandbox import SandboxPart
    from deepacp.session.replays import Replays, code_stamp, file_stamp, replays_of
    from deepacp.session.restore import Restored
    from deepacp.session.storage import open_store
    from deepacp.session.storage.migrations import LATEST, schema_version
    from deepacp.session.storage.postgres import PostgresStore
    from deepacp.session.storage.records import SessionRecord, Store, now
    from deepacp.session.turns.usage import TokenUsage
    from deepacp.session.workspace import through_editor

_EXPORTS = {
    "deepacp.session.assembly": ("import_harness",),
    "deepacp.session.core": ("Session",),
    "deepacp.session.hosts.local": ("Ready", "no_wait"),
    "deepacp.session.hosts.threads": ("TOKEN_VARIABLE", "ServerThreads", "token_headers"),
    "deepacp.session.lifecycle": ("SessionManager", "Workspace"),
    "deepacp.session.mcp": ("McpServer",),
    "deepacp.session.modes": ("DEFAULT_MODE", "MODES", "Mode", "parse_mode"),
    "deepacp.session.parts.profile": ("ProfilePart",),
    "deepacp.session.parts.restore": ("RestorePart",),
    "deepacp.session.parts.sandbox": ("SandboxPart",),
    "deepacp.session.replays": ("Replays", "code_stamp", "file_stamp", "replays_of"),
    "deepacp.session.restore": ("Restored",),
    "deepacp.session.storage": ("open_store",),
    "deepacp.session.storage.migrations": ("LATEST", "schema_version"),
    "deepacp.session.storage.postgres": ("PostgresStore",),
    "deepacp.session.storage.records": ("SessionRecord", "Store", "now"),
    "deepacp.session.turns.usage": ("TokenUsage",),
    "deepacp.session.workspace": ("through_editor",),
}

__all__ = [
    "DEFAULT_MODE",
    "LATEST",
    "MODES",
    "TOKEN_VARIABLE",
    "McpServer",
    "Mode",
    "PostgresStore",
    "ProfilePart",
    "Ready",
    "Replays",
    "RestorePart",
    "Restored",
    "SandboxPart",
    "ServerThreads",
    "Session",
    "SessionManager",
    "SessionRecord",
    "Store",
    "TokenUsage",
    "Workspace",
    "code_stamp",
    "file_stamp",
    "import_harness",
    "no_wait",
    "now",
    "open_store",
    "parse_mode",
    "replays_of",
    "schema_version",
    "through_editor",
    "token_headers",
]


__getattr__ = lazy_names(__name__, homes_of(_EXPORTS))
