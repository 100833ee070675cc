"""The language server's state: options, what the client supports, the open documents,
the workspace folders, the proposals (one per edit request, each kept until it is decided),
the edits sent to the editor and the runs in progress."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from lsprotocol import types as T
from pygls import uris
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.workspace import TextDocument

from deepacp._version import __version__
from deepacp.backends.sandbox import SandboxPolicy
from deepacp.lsp import edits, review
from deepacp.lsp.applying import InFlight
from deepacp.lsp.capabilities import ClientSupport, Tier
from deepacp.lsp.lint import lint
from deepacp.lsp.options import LspOptions
from deepacp.lsp.proposal import FileChange, Proposal


class DeepacpProtocol(LanguageServerProtocol):
    """pygls drops a request whose params do not fit its method's types without a response,
    so the client would wait for it forever: answer it with the error instead."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            request_id = data.get("id")
            if (
                "method" in data
                and isinstance(request_id, int | str)
                and not isinstance(request_id, bool)  # JSON true is no request id
            ):
                self._send_response(request_id, None, error.to_response_error())
            raise


class DeepacpLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("deepacp", __version__, protocol_cls=DeepacpProtocol)
        self.options = LspOptions()
        self.support = ClientSupport()
        """What the client declared at initialize."""
        self.tiers: set[Tier] = {"diagnostics"}
        self.roots: list[Path] = []
        """The workspace folders; a file outside all of them is refused."""
        self.proposals: dict[str, Proposal] = {}
        """By id, oldest first."""
        self.in_flight = InFlight()
        self.last_uri: str | None = None
        """The document the user last opened, changed or asked about."""
        self.runs: dict[str, asyncio.Task] = {}
        self.sandbox_flag: SandboxPolicy | None = None
        """The --sandbox flag (see `lsp_sandbox`)."""
        self.profile_flag: str | None = None
        """The --profile flag (None: DEEPACP_PROFILE, then config.toml)."""
        self._run_ids = itertools.count(1)
        self._published: set[str] = set()

    def document(self, uri: str) -> TextDocument | None:
        return self.workspace.text_documents.get(uri)

    def open_text(self, path: Path) -> str | None:
        """The editor's (unsaved) text of an open file, for the overlay."""
        target = path.resolve()
        for uri, document in self.workspace.text_documents.items():
            fs_path = uris.to_fs_path(uri)
            if fs_path and Path(fs_path).resolve() == target:
                return document.source
        return None

    def display_name(self, path: str) -> str:
        """A file's name to show the user: relative to its workspace folder."""
        resolved = Path(path).resolve()
        for root in self.roots:
            if resolved.is_relative_to(root.resolve()):
                return resolved.relative_to(root.resolve()).as_posix()
        return path

    def current(self, change: FileChange) -> tuple[str | None, int | None]:
        """A proposed file as it is now and its editor version: the editor's text where it
        is open, else the disk's (None: the file does not exist)."""
        document = self.document(change.uri)
        if document is not None:
            return document.source, document.version
        path = Path(change.path)
        return (path.read_text(encoding="utf-8") if path.is_file() else None), None

    def documents_for(self, proposal: Proposal) -> edits.Documents:
        return {uri: self.current(change) for uri, change in proposal.files.items()}

    def in_file(self, uri: str) -> list[tuple[Proposal, FileChange]]:
        """The proposals with hunks still open in `uri`, oldest first, and their change there."""
        return [
            (p, change)
            for p in self.proposals.values()
            if (change := p.files.get(uri)) is not None and change.open
        ]

    def publish(self) -> None:
        """Diagnostics for every file of every proposal; clear the ones that are done."""
        current: set[str] = set()
        uris = {uri for p in self.proposals.values() for uri in p.files}
        for uri in sorted(uris):
            items = [
                d
                for proposal, change in self.in_file(uri)
                for d in review.diagnostics(proposal, change, self.current(change)[0] or "")
            ]
            self.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri, items))
            if items:
                current.add(uri)
        for uri in self._published - current - uris:
            self.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri, []))
        self._published = current

    def lint(self, uri: str) -> None:
        document = self.document(uri)
        path = uris.to_fs_path(uri)
        if document is None or not path:
            return
        items = lint(Path(path), document.source)
        if items is not None and uri not in self._published:
            self.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri, items))

    def notify_user(self, message: str, kind: T.MessageType = T.MessageType.Info) -> None:
        self.window_show_message(T.ShowMessageParams(type=kind, message=message))

    def add_proposal(self, proposal: Proposal) -> None:
        """Keep `proposal` beside the others; forget the ones with nothing left open."""
        self.proposals = {
            i: p for i, p in self.proposals.items() if any(f.open for f in p.files.values())
        }
        self.proposals[proposal.id] = proposal

    def active(self, proposal_ids: tuple[str, ...]) -> Proposal | None:
        """The proposal named, or when none is, the latest with hunks still open (else the
        latest: there is nothing left to decide in it)."""
        if proposal_ids:
            proposal = self.proposals.get(proposal_ids[0])
        else:
            latest = [p for p in self.proposals.values() if p.open] or list(self.proposals.values())
            proposal = latest[-1] if latest else None
        if proposal is None:
            self.notify_user("deepacp: that proposal is no longer active", T.MessageType.Warning)
        return proposal

    async def apply_edit(
        self, edit: T.WorkspaceEdit, label: str, answered: Answered | None = None
    ) -> tuple[bool, str]:
        """Ask the editor to apply `edit`: whether it says it did, and if not, why not
        (its reason, or the error it answered with). `answered` gets that the moment the
        answer is read, before any message the editor sent after it is handled."""
        params = T.ApplyWorkspaceEditParams(edit=edit, label=label)
        future = self.protocol.send_request(T.WORKSPACE_APPLY_EDIT, params)
        if answered is not None:
            future.add_done_callback(lambda done: answered(*_answer(done)))
        with contextlib.suppress(Exception):  # read by _answer
            await asyncio.wrap_future(future)
        return _answer(future)


Answered = Callable[[bool, str], None]
"""Told the editor's answer to an edit: whether it applied it, and if not, why not."""


def _answer(future: Future) -> tuple[bool, str]:
    """The editor's answer to `workspace/applyEdit`, as (applied, why not)."""
    if future.cancelled():
        return False, "the request was cancelled"
    if (error := future.exception()) is not None:
        message = error.message if isinstance(error, JsonRpcException) else str(error)
        return False, f"it answered with an error: {message}"
    result = future.result()
    if not isinstance(result, T.ApplyWorkspaceEditResult):
        return False, "it did not say whether it applied it"
    if not result.applied:
        return False, result.failure_reason or "it refused"
    return True, ""
