"""Backends: where the agent's files live and whether it has a shell."""

from deepacp.backends.base import BaseBackend, DelegatingBackend
from deepacp.backends.composite import CompositeBackend
from deepacp.backends.editor import EditorBackend
from deepacp.backends.editor_client import EditorClient, EditorError, TerminalStatus
from deepacp.backends.errors import BackendError, NotFoundError, PathError
from deepacp.backends.filesystem import FilesystemBackend
from deepacp.backends.permissions import (
    CommandRule,
    PermissionBackend,
    PermissionDenied,
    PermissionRule,
)
from deepacp.backends.protocol import Backend, Entry, ExecuteResult, Shell, ShellCommand
from deepacp.backends.search import GrepMatch, GrepQuery
from deepacp.backends.shell import LocalShellBackend
from deepacp.backends.state import StateBackend, state_scope
from deepacp.backends.store import StoreBackend

__all__ = [
    "Backend",
    "BackendError",
    "BaseBackend",
    "CommandRule",
    "CompositeBackend",
    "DelegatingBackend",
    "EditorBackend",
    "EditorClient",
    "EditorError",
    "Entry",
    "ExecuteResult",
    "FilesystemBackend",
    "GrepMatch",
    "GrepQuery",
    "LocalShellBackend",
    "NotFoundError",
    "PathError",
    "PermissionBackend",
    "PermissionDenied",
    "PermissionRule",
    "Shell",
    "ShellCommand",
    "StateBackend",
    "StoreBackend",
    "TerminalStatus",
    "state_scope",
]
