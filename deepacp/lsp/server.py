"""`deepacp lsp`: ask for an edit from any editor and review it inline before it applies.

The agent runs on the same session runtime as the ACP face, over an overlay of the
workspace: it reads the editor's open documents (unsaved text included), and its writes
become a proposal the user accepts or rejects hunk by hunk. Nothing touches a file until
the user accepts. Handlers here are thin: wire shapes are decided in `review.py` and
`edits.py`, the review commands live in `decisions.py`.
"""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types as T
from pygls import uris
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import default_converter

from deepacp.errors import DeepacpError
from deepacp.lsp import decisions, review
from deepacp.lsp.arguments import EDIT, BadRequest, edit_target, parse_edit_args
from deepacp.lsp.capabilities import client_support, review_tiers
from deepacp.lsp.language_server import DeepacpLanguageServer, LspOptions

log = logging.getLogger(__name__)

CANCEL = "deepacp.cancel"
INSTRUCTION = re.compile(r"(?:#|//|--|;|/\*|<!--|\*)\s*deepacp:\s*(?P<text>.+?)\s*(?:\*/|-->)?\s*$")
_CONVERTER = default_converter()
REQUEST_FAILED = -32803

server = DeepacpLanguageServer()
decisions.register(server)


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


def serve() -> int:
    from deepacp.logs import configure

    configure("lsp")
    server.start_io()
    return 0
