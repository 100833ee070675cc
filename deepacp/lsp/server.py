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
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, default_converter
from pygls.workspace import TextDocument

from deepacp._version import __version__
from deepacp.lsp import review
from deepacp.lsp.lint import lint
from deepacp.lsp.proposal import FileChange, Proposal

log = logging.getLogger(__name__)

EDIT = "deepacp.edit"
CANCEL = "deepacp.cancel"
INSTRUCTION = re.compile(r"(?:#|//|--|;|/\*|<!--|\*)\s*deepacp:\s*(?P<text>.+?)\s*(?:\*/|-->)?\s*$")
_CONVERTER = default_converter()
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


@attrs.define
class EditArgs:
    uri: str
    instruction: str
    range: T.Range | None = None


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
        self.support: review.ClientSupport | None = None
        self.tiers: set[review.Tier] = {"diagnostics"}
        self.root: Path | None = None
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

    def documents_for(self, proposal: Proposal) -> review.Documents:
        out: review.Documents = {}
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

    def edit_args(self, arguments: tuple[Any, ...]) -> EditArgs:
        """Typed {uri, instruction, range?} from editor glue, or an instruction typed at a
        prompt (Helix: `:lsp-workspace-command deepacp.edit "make it async"`), which is
        about the document the user last worked in."""
        if len(arguments) == 1 and isinstance(arguments[0], dict):
            try:
                return _CONVERTER.structure(arguments[0], EditArgs)
            except Exception as exc:
                raise ValueError(f"{EDIT} takes {{uri, instruction, range?}}: {exc}") from None
        if arguments and all(isinstance(a, str) for a in arguments):
            if self.last_uri is None:
                raise ValueError(f"{EDIT}: open the file the instruction is about first")
            return EditArgs(self.last_uri, " ".join(arguments))
        raise ValueError(f"{EDIT} takes {{uri, instruction, range?}} or an instruction string")

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
    ls.support = review.client_support(params.capabilities)
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
    ls.tiers = review.review_tiers(ls.support, ls.options.review)
    root = params.root_uri or (
        params.workspace_folders[0].uri if params.workspace_folders else None
    )
    if root and (path := uris.to_fs_path(root)):
        ls.root = Path(path)


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
    return review.hover(proposal, change, text, params.position.line)


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

    args = ls.edit_args(arguments)
    run_id = f"run-{next(ls._run_ids)}"
    task = asyncio.create_task(run_edit(ls, run_id, args))
    ls.runs[run_id] = task
    try:
        return await task
    except asyncio.CancelledError:
        if task.cancelled():
            return {"run": run_id, "cancelled": True}
        raise
    finally:
        ls.runs.pop(run_id, None)


@server.command(CANCEL)
async def cancel(ls: DeepacpLanguageServer, *run_ids: str) -> dict:
    """Cancel the given runs (all running ones when none is named)."""
    targets = [ls.runs[r] for r in run_ids if r in ls.runs] if run_ids else list(ls.runs.values())
    for task in targets:
        task.cancel()
    return {"cancelled": len(targets)}


def _active(ls: DeepacpLanguageServer, proposal_id: str) -> Proposal | None:
    proposal = ls.proposal
    if proposal is None or proposal.id != proposal_id:
        ls.notify_user("deepacp: that proposal is no longer active", T.MessageType.Warning)
        return None
    return proposal


def _mark(proposal: Proposal, uri: str, hunk_ids: list[str], state: str) -> None:
    change = proposal.files.get(uri)
    for hunk in change.hunks if change else []:
        if hunk.id in hunk_ids and hunk.state == "pending":
            hunk.state = state  # type: ignore[assignment]


def _write_by_server(changes: list[FileChange]) -> None:
    """Create or delete files the client could not (it lacks file operations)."""
    from deepacp.backends.filesystem import atomic_write

    for change in changes:
        path = Path(change.path)
        if change.new_text is None:
            path.unlink(missing_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, change.new_text)


@server.command(review.ACCEPTED)
def accepted(ls: DeepacpLanguageServer, proposal_id: str, uri: str, hunk_ids: list[str]) -> None:
    if (proposal := _active(ls, proposal_id)) is not None:
        _mark(proposal, uri, hunk_ids, "accepted")
        ls.publish()


@server.command(review.ACCEPTED_PROPOSAL)
def accepted_proposal(
    ls: DeepacpLanguageServer, proposal_id: str, covered: dict[str, list[str]], by_server: list[str]
) -> None:
    if (proposal := _active(ls, proposal_id)) is None:
        return
    _write_by_server([proposal.files[uri] for uri in by_server])
    for uri, ids in covered.items():
        _mark(proposal, uri, ids, "accepted")
    ls.publish()


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
    if (proposal := _active(ls, proposal_id)) is None or (
        change := proposal.files.get(uri)
    ) is None:
        return {"applied": False, "reason": "no such proposal"}
    text, version = ls.documents_for(proposal)[uri]
    edit, covered = review.file_edit(change, text or "", version, ls.support, hunk_ids)
    if edit is None:
        ls.notify_user(
            "deepacp: the text under that change was edited since; refused (stale)",
            T.MessageType.Warning,
        )
        return {"applied": False, "reason": "stale"}
    if not await _apply(ls, edit, "deepacp: accept"):
        return {"applied": False, "reason": "refused by the editor"}
    _mark(proposal, uri, covered, "accepted")
    ls.publish()
    return {"applied": True, "hunks": covered}


@server.command(review.ACCEPT_PROPOSAL)
async def accept_proposal(ls: DeepacpLanguageServer, proposal_id: str) -> dict:
    if (proposal := _active(ls, proposal_id)) is None:
        return {"applied": False, "reason": "no such proposal"}
    edit, covered, by_server = review.proposal_edit(
        proposal, ls.documents_for(proposal), ls.support
    )
    if (edit.document_changes or edit.changes) and not await _apply(
        ls, edit, "deepacp: accept proposal"
    ):
        return {"applied": False, "reason": "refused by the editor"}
    _write_by_server(by_server)
    for uri, ids in covered.items():
        _mark(proposal, uri, ids, "accepted")
    ls.publish()
    return {"applied": True, "files": sorted(covered)}


@server.command(review.REJECT_HUNK)
def reject_hunk(ls: DeepacpLanguageServer, proposal_id: str, uri: str, hunk_id: str) -> None:
    if (proposal := _active(ls, proposal_id)) is not None:
        _mark(proposal, uri, [hunk_id], "rejected")
        ls.publish()


@server.command(review.REJECT_PROPOSAL)
def reject_proposal(ls: DeepacpLanguageServer, proposal_id: str) -> None:
    if (proposal := _active(ls, proposal_id)) is not None:
        for uri, change in proposal.files.items():
            _mark(proposal, uri, [h.id for h in change.hunks], "rejected")
        ls.publish()


@server.command(review.REVIEW)
async def review_in_editor(ls: DeepacpLanguageServer, proposal_id: str) -> dict:
    """One annotated edit needing confirmation (VS Code opens its refactor preview)."""
    if (proposal := _active(ls, proposal_id)) is None:
        return {"applied": False}
    edit = review.annotated_edit(proposal, ls.documents_for(proposal))
    applied = await _apply(ls, edit, f"deepacp: {review.summary(proposal)}")
    if applied:
        for uri, change in proposal.files.items():
            _mark(proposal, uri, [h.id for h in change.pending], "accepted")
        ls.publish()
    return {"applied": applied}


@server.command(review.SHOW_DIFF)
async def show_diff(ls: DeepacpLanguageServer, proposal_id: str) -> dict:
    from deepacp.config import deepacp_home
    from deepacp.diffs import unified_diff

    if (proposal := _active(ls, proposal_id)) is None:
        return {}
    folder = deepacp_home() / "proposals"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{proposal.id}.diff"
    root = ls.root or Path("/")
    parts = []
    for change in proposal.files.values():
        name = (
            Path(change.path).relative_to(root).as_posix()
            if Path(change.path).is_relative_to(root)
            else change.path
        )
        parts.append(unified_diff(name, change.old_text, change.new_text))
    path.write_text("".join(parts), encoding="utf-8")
    if ls.support and ls.support.show_document:
        await ls.window_show_document_async(
            T.ShowDocumentParams(uri=path.as_uri(), take_focus=True)
        )
    return {"path": str(path)}


def serve() -> int:
    from deepacp.logs import configure

    configure("lsp")
    server.start_io()
    return 0
