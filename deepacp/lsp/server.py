"""`deepacp lsp`: ask for an edit from any editor and review it inline before it applies.

The agent runs on the same session runtime as the ACP face, over an overlay of the
workspace: it reads the editor's open documents (unsaved text included), and its writes
become a proposal the user accepts or rejects hunk by hunk. Nothing touches a file until
the user accepts. Handlers here are thin: wire shapes are decided in `review.py`,
`edits.py` and `offers.py`, the hunks' states in `proposal.py`, the review commands live
in `decisions.py` and `accepting.py`, when an accept counts in `applying.py`, and a run in
`runner.py`. Each edit request's proposal is kept beside the others until it is decided.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, BinaryIO

from lsprotocol import types as T
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from deepacp.backends.sandbox import SandboxPolicy
from deepacp.errors import DeepacpError
from deepacp.lsp import decisions, offers, review
from deepacp.lsp.arguments import EDIT, BadRequest, edit_target, parse_edit_args
from deepacp.lsp.capabilities import client_support, review_tiers
from deepacp.lsp.language_server import DeepacpLanguageServer
from deepacp.lsp.options import read_options, workspace_roots
from deepacp.lsp.runner import run_edit

log = logging.getLogger(__name__)

CANCEL = "deepacp.cancel"
REQUEST_FAILED = -32803
CODE_ACTION_KINDS = T.CodeActionOptions(
    code_action_kinds=[T.CodeActionKind.QuickFix, T.CodeActionKind.Refactor]
)


def initialize(ls: DeepacpLanguageServer, params: T.InitializeParams) -> None:
    ls.support = client_support(params.capabilities, params.client_info)
    ls.options, problems = read_options(params.initialization_options)
    for problem in problems:
        log.warning("%s", problem)
    ls.tiers = review_tiers(ls.support, ls.options.review)
    ls.roots = workspace_roots(params)


def seen(ls: DeepacpLanguageServer, uri: str, reported: bool) -> None:
    """The editor's text of `uri` as it is now settles the edits sent to it (see
    `applying.py`); `reported`: the editor has sent its changes to that document."""
    if (document := ls.document(uri)) is not None and ls.in_flight.on(uri):
        ls.in_flight.text_seen(uri, document.source, reported)


def did_open(ls: DeepacpLanguageServer, params: T.DidOpenTextDocumentParams) -> None:
    ls.last_uri = params.text_document.uri
    ls.lint(params.text_document.uri)
    seen(ls, params.text_document.uri, reported=False)


def did_change(ls: DeepacpLanguageServer, params: T.DidChangeTextDocumentParams) -> None:
    uri = ls.last_uri = params.text_document.uri
    ls.lint(uri)
    seen(ls, uri, reported=True)
    if ls.in_file(uri):
        ls.publish()


def hover(ls: DeepacpLanguageServer, params: T.HoverParams) -> T.Hover | None:
    uri = params.text_document.uri
    seen(ls, uri, reported=True)
    for proposal, change in reversed(ls.in_file(uri)):
        text = ls.current(change)[0] or ""
        found = review.hover(proposal, change, text, params.position.line, ls.display_name)
        if found is not None:
            return found
    return None


def code_action(ls: DeepacpLanguageServer, params: T.CodeActionParams) -> list[T.CodeAction]:
    uri = ls.last_uri = params.text_document.uri
    seen(ls, uri, reported=True)
    actions: list[T.CodeAction] = []
    mine = [(p, change) for p, change in ls.in_file(uri) if change.pending]
    for proposal, change in reversed(mine):  # the latest proposal first
        documents = ls.documents_for(proposal)
        named = len(mine) > 1
        actions += review.code_actions(
            proposal, change, documents, params.range, ls.support, ls.tiers, named
        )
    if (document := ls.document(uri)) is not None:
        actions += offers.instruction_actions(uri, document.lines, params.range)
    return actions + offers.fix_actions(uri, params.context.diagnostics)


def code_lens(ls: DeepacpLanguageServer, params: T.CodeLensParams) -> list[T.CodeLens]:
    if "lens" not in ls.tiers:
        return []
    seen(ls, params.text_document.uri, reported=True)
    return [
        lens
        for proposal, change in ls.in_file(params.text_document.uri)
        for lens in review.code_lenses(proposal, change, ls.current(change)[0] or "")
    ]


async def edit(ls: DeepacpLanguageServer, *arguments: Any) -> dict:
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


async def cancel(ls: DeepacpLanguageServer, *run_ids: str) -> dict:
    """Cancel the given runs (all running ones when none is named)."""
    targets = [ls.runs[r] for r in run_ids if r in ls.runs] if run_ids else list(ls.runs.values())
    for task in targets:
        task.cancel()
    return {"cancelled": len(targets)}


def build(
    sandbox: SandboxPolicy | None = None, profile: str | None = None
) -> DeepacpLanguageServer:
    """A language server with deepacp's handlers: one per `deepacp lsp` process (the tests
    of tests/inprocess/ make one per test). `sandbox` and `profile`: the flags."""
    ls = DeepacpLanguageServer()
    ls.sandbox_flag = sandbox
    ls.profile_flag = profile
    decisions.register(ls)
    ls.feature(T.INITIALIZE)(initialize)
    ls.feature(T.TEXT_DOCUMENT_DID_OPEN)(did_open)
    ls.feature(T.TEXT_DOCUMENT_DID_CHANGE)(did_change)
    ls.feature(T.TEXT_DOCUMENT_HOVER)(hover)
    ls.feature(T.TEXT_DOCUMENT_CODE_ACTION, CODE_ACTION_KINDS)(code_action)
    ls.feature(T.TEXT_DOCUMENT_CODE_LENS)(code_lens)
    ls.command(EDIT)(edit)
    ls.command(CANCEL)(cancel)
    return ls


def serve(
    sandbox: SandboxPolicy | None = None,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
    profile: str | None = None,
) -> int:
    """Serve on `stdin`/`stdout` (default: the process's); see `deepacp.lsp.boot`."""
    from deepacp.logs import configure

    configure("lsp", one_line=True)  # a client's bad message is no traceback for a person
    build(sandbox, profile).start_io(stdin, stdout)
    return 0
