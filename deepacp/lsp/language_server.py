"""The language server's state: options, what the client supports, the open documents,
the workspace folders, the active proposal and the runs in progress."""

from __future__ import annotations

import asyncio
import itertools
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
        self.proposal: Proposal | None = None
        self.last_uri: str | None = None
        """The document the user last opened, changed or asked about."""
        self.runs: dict[str, asyncio.Task] = {}
        self.sandbox_flag: SandboxPolicy | None = None
        """The --sandbox flag (see `lsp_sandbox`)."""
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

    def publish(self) -> None:
        """Diagnostics for every file of the active proposal; clear the ones that are done."""
        current: set[str] = set()
        if self.proposal is not None:
            documents = self.documents_for(self.proposal)
            for uri, change in self.proposal.files.items():
                text = documents[uri][0]
                items = (
                    review.diagnostics(self.proposal, change, text or "") if change.pending else []
                )
                self.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri, items))
                if items:
                    current.add(uri)
        for uri in self._published - current:
            if self.proposal is None or uri not in self.proposal.files:
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

    def active(self, proposal_ids: tuple[str, ...]) -> Proposal | None:
        """The proposal named (the active one when none is), if it is still the active one."""
        proposal = self.proposal
        if proposal is None or (proposal_ids and proposal.id != proposal_ids[0]):
            self.notify_user("deepacp: that proposal is no longer active", T.MessageType.Warning)
            return None
        return proposal

    async def apply_edit(self, edit: T.WorkspaceEdit, label: str) -> bool:
        """Ask the editor to apply `edit`; say so when it does not."""
        params = T.ApplyWorkspaceEditParams(edit=edit, label=label)
        result = await self.workspace_apply_edit_async(params)
        if not result.applied:
            reason = result.failure_reason or "refused"
            self.notify_user(f"deepacp: the editor did not apply the change ({reason})")
        return result.applied
