"""Running one edit request: the session runtime over an overlay, then a proposal."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as T
from pygls import uris

from deepacp.backends.overlay import OverlayBackend
from deepacp.config import deepacp_home
from deepacp.events import (
    ASK_IN_CHAT,
    Event,
    MessageChunk,
    Notice,
    PermissionKind,
    PermissionRequest,
    Question,
    ToolStarted,
)
from deepacp.lsp.proposal import make_proposal

if TYPE_CHECKING:
    from deepacp.lsp.server import DeepacpLanguageServer, EditArgs

_proposal_ids = itertools.count(1)

PROMPT = """\
Edit request from the user's editor: {instruction}
File: {path}{selection}
Make the change with edit_file or write_file. Your edits are not applied directly: they
become a proposal the user reviews in the editor, hunk by hunk. When you are done, say in
one or two sentences what you changed and why."""


class LspHandler:
    """A session's events as progress; its questions as message requests."""

    def __init__(self, ls: DeepacpLanguageServer, token: str | None) -> None:
        self.ls = ls
        self.token = token
        self.answer: list[str] = []

    async def emit(self, event: Event) -> None:
        if isinstance(event, MessageChunk):
            self.answer.append(event.text)
        elif isinstance(event, ToolStarted) and self.token is not None:
            self.ls.work_done_progress.report(
                self.token, T.WorkDoneProgressReport(message=event.title)
            )
        elif isinstance(event, Notice):
            self.ls.window_log_message(
                T.LogMessageParams(type=T.MessageType.Warning, message=event.text)
            )

    async def _choose(self, message: str, choices: list[str]) -> str | None:
        support = self.ls.support
        if support is None or not support.show_message_request:
            return None
        params = T.ShowMessageRequestParams(
            type=T.MessageType.Warning,
            message=message,
            actions=[T.MessageActionItem(title=c) for c in choices],
        )
        picked = await self.ls.window_show_message_request_async(params)
        return picked.title if picked is not None else None

    async def ask_permission(self, request: PermissionRequest) -> PermissionKind | None:
        from deepacp.lsp.server import SHELL_CHOICES

        policy = self.ls.options.shell
        if policy == "allow":
            return "allow_once"
        if policy == "deny":
            return "reject_once"
        picked = await self._choose(f"deepacp wants to run: {request.title}", list(SHELL_CHOICES))
        return SHELL_CHOICES.get(picked or "Deny", "reject_once")

    async def ask(self, question: Question) -> str | None:
        if question.choices:
            picked = await self._choose(question.question, list(question.choices))
            if picked is not None:
                return picked
        return ASK_IN_CHAT


def _selection(args: EditArgs, text: str | None) -> str:
    if args.range is None or text is None:
        return ""
    lines = text.splitlines(keepends=True)
    start, end = args.range.start.line, max(args.range.end.line, args.range.start.line)
    chosen = "".join(lines[start : end + 1])
    return f", lines {start + 1}-{end + 1}:\n```\n{chosen}```"


async def run_edit(ls: DeepacpLanguageServer, run_id: str, args: EditArgs) -> dict:
    from deepacp.models import check_provider, configured_spec, resolve_model
    from deepacp.session.runtime import Session
    from deepacp.session.store import SessionStore

    fs_path = uris.to_fs_path(args.uri)
    if not fs_path:
        raise ValueError(f"not a file URI: {args.uri}")
    target = Path(fs_path)
    root = ls.root or target.parent
    spec = configured_spec(ls.options.model)
    check_provider(spec)

    token = None
    if ls.support is not None and ls.support.progress:
        token = f"deepacp-{run_id}"
        await ls.work_done_progress.create_async(token)
        begin = T.WorkDoneProgressBegin(title="deepacp", message=args.instruction, cancellable=True)
        ls.work_done_progress.begin(token, begin)
        task = asyncio.current_task()
        ls.work_done_progress.tokens[token].add_done_callback(
            lambda future: future.cancelled() and task is not None and task.cancel()
        )

    overlays: list[OverlayBackend] = []

    def view(disk):
        overlay = OverlayBackend(disk, ls.open_text)
        overlays.append(overlay)
        return overlay

    store = SessionStore(deepacp_home())
    handler = LspHandler(ls, token)
    record = store.create(str(root), "accept-edits", spec)
    session = Session(record, store, handler, resolve_model, view=view)
    relative = target.relative_to(root).as_posix() if target.is_relative_to(root) else str(target)
    prompt = PROMPT.format(
        instruction=args.instruction,
        path=relative,
        selection=_selection(args, ls.open_text(target)),
    )
    try:
        stop = await session.prompt(prompt)
    except asyncio.CancelledError:
        await session.cancel()
        raise
    finally:
        if token is not None:
            ls.work_done_progress.end(token, T.WorkDoneProgressEnd(message="done"))
        await session.close()
        await store.close()
    changes = {}
    for overlay in overlays:
        for path, (old, new) in overlay.changes().items():
            disk = overlay.disk_path(path)
            changes[disk.as_uri()] = (str(disk), disk.as_uri(), old, new)
    proposal = make_proposal(f"p{next(_proposal_ids)}", changes)
    proposal.rationale = "".join(handler.answer).strip()
    ls.proposal = proposal if proposal.files else None
    ls.publish()
    hunks = sum(len(f.hunks) for f in proposal.files.values())
    if hunks == 0 and proposal.rationale:
        ls.notify_user(f"deepacp: {proposal.rationale}")
    return {
        "run": run_id,
        "stop": stop,
        "proposal": proposal.id if proposal.files else None,
        "files": sorted(proposal.files),
        "hunks": hunks,
        "summary": proposal.rationale,
    }
