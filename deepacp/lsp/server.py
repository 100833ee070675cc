"""`deepacp lsp`: ask for an edit from any editor and review it inline before it applies.

The agent runs on the same session runtime as the ACP face, over an overlay of the
workspace: it reads the editor's open documents (unsaved text included), and its writes
become a proposal the user accepts or rejects hunk by hunk. Nothing touches a file until
the user accepts. Handlers here are thin; wire shapes are decided in `review.py`.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import re
from pathlib import Path
from typing import Any, Literal

import attrs
from lsprotocol import types as T
from pygls import uris
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, default_converter
from pygls.workspace import TextDocument

from deepacp._version import __version__
from deepacp.errors import DeepacpError
from deepacp.lsp import edits, review
from deepacp.lsp.arguments import EDIT, BadRequest, edit_target, parse_edit_args
from deepacp.lsp.capabilities import ClientSupport, Tier, client_support, review_tiers
from deepacp.lsp.lint import lint
from deepacp.lsp.proposal import Proposal

log = logging.getLogger(__name__)

CANCEL = "deepacp.cancel"
INSTRUCTION = re.compile(r"(?:#|//|--|;|/\*|<!--|\*)\s*deepacp:\s*(?P<text>.+?)\s*(?:\*/|-->)?\s*$")
_CONVERTER = default_converter()
REQUEST_FAILED = -32803
SHELL_CHOICES = {
    "Allow once": "allow_once",
    "Always for this session": "allow_always",
    "Deny": "reject_once",
}


@attrs.define
class LspOptions:
    """initializationOptions. Unknown keys are reported, not silently dropped."""

    model: str | None = None
    shell: Literal["ask", "allow", "deny"] = "ask"
    review: Literal["auto", "diagnostics", "annotated", "lens"] = "auto"


class DeepacpProtocol(LanguageServerProtocol):
    """pygls drops a request whose params do not fit its method's types without a response,
    so the client would wait for it forever: answer it with the error instead."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            request_id = data.get("id")
            if "method" in data and type(request_id) in (int, str):
                self._send_response(request_id, None, error.to_response_error())
            raise


class DeepacpLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("deepacp", __version__, protocol_cls=DeepacpProtocol)
        self.options = LspOptions()
        self.support: ClientSupport | None = None
        self.tiers: set[Tier] = {"diagnostics"}
        self.roots: list[Path] = []
        """The workspace folders; a file outside all of them is refused."""
        self.proposal: Proposal | None = None
        self.last_uri: str | None = (
            None  # the document the user last opened, changed or asked about
        )
        self.runs: dict[str, asyncio.Task] = {}
        self._run_ids = itertools.count(1)
        self._published: set[str] = set()

    # -- documents -----------------------------------------------------------------

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

    def documents_for(self, proposal: Proposal) -> edits.Documents:
        out: edits.Documents = {}
        for uri, change in proposal.files.items():
            document = self.document(uri)
            if document is not None:
                out[uri] = (document.source, document.version)
            else:
                path = Path(change.path)
                out[uri] = (path.read_text(encoding="utf-8") if path.is_file() else None, None)
        return out

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


server = DeepacpLanguageServer()


@server.feature(T.INITIALIZE)
def initialize(ls: DeepacpLanguageServer, params: T.InitializeParams) -> None:
    ls.support = client_support(params.capabilities)
    options = params.initialization_options or {}
    if isinstance(options, dict):
        known = {f.name for f in attrs.fields(LspOptions)}
        unknown = sorted(set(options) - known)
        try:
            ls.options = _CONVERTER.structure(
                {k: v for k, v in options.items() if k in known}, LspOptions
            )
        except Exception as exc:
            log.warning("bad initializationOptions: %s", exc)
            ls.options = LspOptions()
        if unknown:
            log.warning("unknown initializationOptions: %s", ", ".join(unknown))
    ls.tiers = review_tiers(ls.support, ls.options.review)
    folders = [f.uri for f in params.workspace_folders or []] or [params.root_uri]
    ls.roots = [Path(path) for uri in folders if uri and (path := uris.to_fs_path(uri))]


@server.feature(T.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: DeepacpLanguageServer, params: T.DidOpenTextDocumentParams) -> None:
    ls.last_uri = params.text_document.uri
    ls.lint(params.text_document.uri)


@server.feature(T.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: DeepacpLanguageServer, params: T.DidChangeTextDocumentParams) -> None:
    ls.last_uri = params.text_document.uri
    ls.lint(params.text_document.uri)
    if ls.proposal is not None and params.text_document.uri in ls.proposal.files:
        ls.publish()


@server.feature(T.TEXT_DOCUMENT_HOVER)
def hover(ls: DeepacpLanguageServer, params: T.HoverParams) -> T.Hover | None:
    proposal = ls.proposal
    if proposal is None or (change := proposal.files.get(params.text_document.uri)) is None:
        return None
    text = ls.documents_for(proposal)[change.uri][0] or ""
    return review.hover(proposal, change, text, params.position.line, ls.display_name)


@server.feature(
    T.TEXT_DOCUMENT_CODE_ACTION,
    T.CodeActionOptions(code_action_kinds=[T.CodeActionKind.QuickFix, T.CodeActionKind.Refactor]),
)
def code_action(ls: DeepacpLanguageServer, params: T.CodeActionParams) -> list[T.CodeAction]:
    uri = ls.last_uri = params.text_document.uri
    actions: list[T.CodeAction] = []
    proposal = ls.proposal
    if proposal is not None and (change := proposal.files.get(uri)) is not None and change.pending:
        actions += review.code_actions(
            proposal, change, ls.documents_for(proposal), params.range, ls.support, ls.tiers
        )
    document = ls.document(uri)
    if document is not None:
        for number in range(
            params.range.start.line, min(params.range.end.line, len(document.lines) - 1) + 1
        ):
            if match := INSTRUCTION.search(document.lines[number]):
                line = T.Range(T.Position(number, 0), T.Position(number + 1, 0))
                args = {"uri": uri, "instruction": match["text"], "range": _range_json(line)}
                title = f"deepacp: {match['text']}"
                actions.append(
                    T.CodeAction(
                        title=title,
                        kind=T.CodeActionKind.QuickFix,
                        command=review.command(title, EDIT, args),
                    )
                )
    for diagnostic in params.context.diagnostics:
        if diagnostic.source == review.SOURCE:
            continue
        args = {
            "uri": uri,
            "instruction": f"Fix this problem: {diagnostic.message}",
            "range": _range_json(diagnostic.range),
        }
        actions.append(
            T.CodeAction(
                title="deepacp: fix this",
                kind=T.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                command=review.command("deepacp: fix this", EDIT, args),
            )
        )
    return actions


def _range_json(value: T.Range) -> dict:
    return {
        "start": {"line": value.start.line, "character": value.start.character},
        "end": {"line": value.end.line, "character": value.end.character},
    }


@server.feature(T.TEXT_DOCUMENT_CODE_LENS)
def code_lens(ls: DeepacpLanguageServer, params: T.CodeLensParams) -> list[T.CodeLens]:
    proposal = ls.proposal
    if (
        "lens" not in ls.tiers
        or proposal is None
        or (change := proposal.files.get(params.text_document.uri)) is None
    ):
        return []
    return review.code_lenses(proposal, change, ls.documents_for(proposal)[change.uri][0] or "")


# -- commands ------------------------------------------------------------------------


@server.command(EDIT)
async def edit(ls: DeepacpLanguageServer, *arguments: Any) -> dict:
    from deepacp.lsp.runner import run_edit

    try:
        args = parse_edit_args(arguments, ls.last_uri)
        target, root = edit_target(args.uri, ls.roots, lambda p: ls.open_text(p) is not None)
    except BadRequest as exc:
        raise JsonRpcInvalidParams(message=str(exc)) from None
    run_id = f"run-{next(ls._run_ids)}"
    task = asyncio.create_task(run_edit(ls, run_id, args, target, root))
    ls.runs[run_id] = task
    try:
        return await task
    except asyncio.CancelledError:
        if task.cancelled():  # before the run had started
            ls.notify_user("deepacp: cancelled before anything was proposed")
            return {"run": run_id, "cancelled": True, "proposal": None}
        raise
    except DeepacpError as exc:
        raise JsonRpcException(code=REQUEST_FAILED, message=str(exc)) from None
    finally:
        ls.runs.pop(run_id, None)


@server.command(CANCEL)
async def cancel(ls: DeepacpLanguageServer, *run_ids: str) -> dict:
    """Cancel the given runs (all running ones when none is named)."""
    targets = [ls.runs[r] for r in run_ids if r in ls.runs] if run_ids else list(ls.runs.values())
    for task in targets:
        task.cancel()
    return {"cancelled": len(targets)}


def _active(ls: DeepacpLanguageServer, proposal_ids: tuple[str, ...]) -> Proposal | None:
    """The proposal named (the active one when none is), if it is still the active one."""
    proposal = ls.proposal
    if proposal is None or (proposal_ids and proposal.id != proposal_ids[0]):
        ls.notify_user("deepacp: that proposal is no longer active", T.MessageType.Warning)
        return None
    return proposal


def _mark(proposal: Proposal, uri: str, hunk_ids: list[str], state: str) -> None:
    change = proposal.files.get(uri)
    for hunk in change.hunks if change else []:
        if hunk.id in hunk_ids and hunk.state == "pending":
            hunk.state = state  # type: ignore[assignment]


def _accepted(
    ls: DeepacpLanguageServer, proposal: Proposal, covered: dict[str, list[str]], left: list
) -> dict:
    """Mark what the editor applied, and tell the user about new files and what is left."""
    for uri, ids in covered.items():
        _mark(proposal, uri, ids, "accepted")
    ls.publish()
    message = review.accept_message(proposal, sorted(covered), left, ls.display_name)
    ls.notify_user(message, T.MessageType.Warning if left else T.MessageType.Info)
    return {
        "applied": bool(covered),
        "files": sorted(covered),
        "left": [
            {
                "file": ls.display_name(proposal.files[x.uri].path),
                "line": x.line + 1,
                "reason": x.reason,
            }
            for x in left
        ],
    }


@server.command(review.ACCEPTED)
def accepted(ls: DeepacpLanguageServer, proposal_id: str, uri: str, hunk_ids: list[str]) -> None:
    if (proposal := _active(ls, (proposal_id,))) is not None:
        _mark(proposal, uri, hunk_ids, "accepted")
        ls.publish()


@server.command(review.ACCEPTED_PROPOSAL)
def accepted_proposal(
    ls: DeepacpLanguageServer, proposal_id: str, covered: dict[str, list[str]]
) -> dict:
    if (proposal := _active(ls, (proposal_id,))) is None:
        return {"applied": False, "reason": "no such proposal"}
    for uri, ids in covered.items():
        _mark(proposal, uri, ids, "accepted")
    left = edits.outstanding(proposal, ls.documents_for(proposal), ls.support)
    return _accepted(ls, proposal, covered, left)


async def _apply(ls: DeepacpLanguageServer, edit: T.WorkspaceEdit, label: str) -> bool:
    result = await ls.workspace_apply_edit_async(T.ApplyWorkspaceEditParams(edit=edit, label=label))
    if not result.applied:
        ls.notify_user(
            f"deepacp: the editor did not apply the change ({result.failure_reason or 'refused'})"
        )
    return result.applied


@server.command(review.ACCEPT_HUNK)
async def accept_hunk(ls: DeepacpLanguageServer, proposal_id: str, uri: str, hunk_id: str) -> dict:
    return await _accept_in_file(ls, proposal_id, uri, {hunk_id})


@server.command(review.ACCEPT_FILE)
async def accept_file(ls: DeepacpLanguageServer, proposal_id: str, uri: str) -> dict:
    return await _accept_in_file(ls, proposal_id, uri, None)


async def _accept_in_file(
    ls: DeepacpLanguageServer, proposal_id: str, uri: str, hunk_ids: set[str] | None
) -> dict:
    if (proposal := _active(ls, (proposal_id,))) is None or (
        change := proposal.files.get(uri)
    ) is None:
        return {"applied": False, "reason": "no such proposal"}
    text, version = ls.documents_for(proposal)[uri]
    part = edits.file_edit(change, text, version, ls.support, hunk_ids)
    edit = edits.workspace_edit([part], ls.support)
    if edit is None:
        if any(x.reason == "delete" for x in part.left):
            ls.notify_user(
                f"deepacp: this editor cannot delete files for deepacp; delete "
                f"{ls.display_name(change.path)} yourself, or reject the change",
                T.MessageType.Warning,
            )
            return {"applied": False, "reason": "cannot delete"}
        ls.notify_user(
            "deepacp: the text under that change was edited since; refused (stale)",
            T.MessageType.Warning,
        )
        return {"applied": False, "reason": "stale"}
    if not await _apply(ls, edit, "deepacp: accept"):
        return {"applied": False, "reason": "refused by the editor"}
    _mark(proposal, uri, list(part.covered), "accepted")
    ls.publish()
    return {"applied": True, "hunks": list(part.covered)}


@server.command(review.ACCEPT_PROPOSAL)
async def accept_proposal(ls: DeepacpLanguageServer, *proposal_id: str) -> dict:
    """Apply everything still pending (in the active proposal when none is named)."""
    if (proposal := _active(ls, proposal_id)) is None:
        return {"applied": False, "reason": "no such proposal"}
    parts = edits.proposal_edits(proposal, ls.documents_for(proposal), ls.support)
    edit = edits.workspace_edit(parts, ls.support)
    if edit is not None and not await _apply(ls, edit, "deepacp: accept proposal"):
        return {"applied": False, "reason": "refused by the editor"}
    covered = {p.uri: list(p.covered) for p in parts if p.covered}
    # Where the rest is once the editor has applied the edit (it may not have told us yet).
    left = sorted((x for p in parts for x in p.left_after()), key=lambda x: (x.uri, x.line))
    return _accepted(ls, proposal, covered, left)


@server.command(review.REJECT_HUNK)
def reject_hunk(ls: DeepacpLanguageServer, proposal_id: str, uri: str, hunk_id: str) -> None:
    if (proposal := _active(ls, (proposal_id,))) is not None:
        _mark(proposal, uri, [hunk_id], "rejected")
        ls.publish()


@server.command(review.REJECT_PROPOSAL)
def reject_proposal(ls: DeepacpLanguageServer, *proposal_id: str) -> dict:
    """Reject everything still pending (in the active proposal when none is named)."""
    if (proposal := _active(ls, proposal_id)) is None:
        return {"rejected": 0}
    count = 0
    for uri, change in proposal.files.items():
        count += len(change.pending)
        _mark(proposal, uri, [h.id for h in change.hunks], "rejected")
    ls.publish()
    return {"rejected": count}


@server.command(review.REVIEW)
async def review_in_editor(ls: DeepacpLanguageServer, proposal_id: str) -> dict:
    """One annotated edit needing confirmation (VS Code opens its refactor preview)."""
    if (proposal := _active(ls, (proposal_id,))) is None:
        return {"applied": False}
    edit, covered = review.annotated_edit(proposal, ls.documents_for(proposal), ls.support)
    if edit is None:
        return {"applied": False}
    applied = await _apply(ls, edit, f"deepacp: {review.summary(proposal)}")
    if applied:
        for uri, ids in covered.items():
            _mark(proposal, uri, ids, "accepted")
        ls.publish()
    return {"applied": applied}


@server.command(review.SHOW_DIFF)
async def show_diff(ls: DeepacpLanguageServer, proposal_id: str) -> dict:
    """The proposal as one unified diff: opened as a document where the client can open
    one, otherwise shown as a message."""
    from deepacp.config import deepacp_home
    from deepacp.diffs import unified_diff

    if (proposal := _active(ls, (proposal_id,))) is None:
        return {}
    folder = deepacp_home() / "proposals"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{proposal.id}.diff"
    text = "".join(
        unified_diff(ls.display_name(c.path), c.old_text, c.new_text)
        for c in proposal.files.values()
    )
    path.write_text(text, encoding="utf-8")
    if ls.support and ls.support.show_document:
        shown = await ls.window_show_document_async(
            T.ShowDocumentParams(uri=path.as_uri(), take_focus=True)
        )
        if shown.success:
            return {"path": str(path), "shown": "document"}
    ls.notify_user(f"deepacp: proposal {proposal.id}\n{text}")
    return {"path": str(path), "shown": "message"}


def serve() -> int:
    from deepacp.logs import configure

    configure("lsp")
    server.start_io()
    return 0
