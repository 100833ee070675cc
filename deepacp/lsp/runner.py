"""Running one edit request: the session runtime over an overlay, then a proposal.

The language server passes itself as the run's `EditorHost`, so this module does not
import the server.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Protocol

from lsprotocol import types as T
from pygls.progress import Progress

from deepacp.backends.overlay import OverlayBackend
from deepacp.backends.proposal_shell import overlay_problem
from deepacp.backends.sandbox import SandboxPolicy
from deepacp.config import deepacp_home, sandbox_policy
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
from deepacp.harness import EDIT_FILE, WRITE_FILE
from deepacp.lsp.arguments import EditArgs
from deepacp.lsp.capabilities import ClientSupport
from deepacp.lsp.feedback import review_since
from deepacp.lsp.messages import outcome_message
from deepacp.lsp.options import LspOptions
from deepacp.lsp.proposal import EditNote, FileChange, Proposal, attach_notes, make_proposal

_proposal_ids = itertools.count(1)
SHELL_CHOICES: dict[str, PermissionKind] = {
    "Allow once": "allow_once",
    "Always for this session": "allow_always",
    "Deny": "reject_once",
}

PROMPT = """\
Edit request from the user's editor: {instruction}
File: {path}{selection}
Make the change with edit_file or write_file. Your edits are not applied directly: they
become a proposal the user reviews in the editor, hunk by hunk. Before each edit, say in one
short line what it does (the user sees that line beside the change). When you are done, say
in one or two sentences what you changed and why."""


class EditorHost(Protocol):
    """What a run needs from the language server: its options and what the client
    supports, the editor's open documents, progress, message requests, and the proposals
    (this run's joins them) with the user told about it."""

    options: LspOptions
    support: ClientSupport
    proposals: dict[str, Proposal]
    sandbox_flag: SandboxPolicy | None
    profile_flag: str | None

    @property
    def work_done_progress(self) -> Progress: ...

    def open_text(self, path: Path) -> str | None: ...

    def display_name(self, path: str) -> str: ...

    def current(self, change: FileChange) -> tuple[str | None, int | None]: ...

    def add_proposal(self, proposal: Proposal) -> None: ...

    def publish(self) -> None: ...

    def notify_user(self, message: str, kind: T.MessageType = ...) -> None: ...

    def window_log_message(self, params: T.LogMessageParams) -> None: ...

    async def window_show_message_request_async(
        self, params: T.ShowMessageRequestParams
    ) -> T.MessageActionItem | None: ...


class LspHandler:
    """A session's events as progress and notes on its edits; its questions as message
    requests."""

    def __init__(self, ls: EditorHost, token: str | None) -> None:
        self.ls = ls
        self.token = token
        self.answer: list[str] = []
        self.notes: list[EditNote] = []
        self._said: list[str] = []  # since the agent's last tool call

    @property
    def summary(self) -> str:
        """What the agent said after its last tool call (all it said, if that is nothing)."""
        return "".join(self._said).strip() or "".join(self.answer).strip()

    async def emit(self, event: Event) -> None:
        if isinstance(event, MessageChunk):
            self.answer.append(event.text)
            self._said.append(event.text)
        elif isinstance(event, ToolStarted):
            if event.name in (EDIT_FILE, WRITE_FILE) and event.locations:
                args = event.args
                wrote = args.get("new_string", args.get("content", ""))
                self.notes.append(
                    EditNote(
                        event.locations[0].path,
                        wrote if isinstance(wrote, str) else "",
                        str(args.get("old_string", "")),
                        "".join(self._said).strip(),
                    )
                )
            self._said = []
            if self.token is not None:
                self.ls.work_done_progress.report(
                    self.token, T.WorkDoneProgressReport(message=event.title)
                )
        elif isinstance(event, Notice):
            self.ls.window_log_message(
                T.LogMessageParams(type=T.MessageType.Warning, message=event.text)
            )

    async def _choose(self, message: str, choices: list[str]) -> str | None:
        if not self.ls.support.show_message_request:
            return None
        params = T.ShowMessageRequestParams(
            type=T.MessageType.Warning,
            message=message,
            actions=[T.MessageActionItem(title=c) for c in choices],
        )
        picked = await self.ls.window_show_message_request_async(params)
        return picked.title if picked is not None else None

    async def ask_permission(self, request: PermissionRequest) -> PermissionKind | None:
        policy = self.ls.options.shell
        if policy == "allow" and not request.outside_sandbox:
            return "allow_once"
        if policy == "deny":
            return "reject_once"
        offered = [title for title, kind in SHELL_CHOICES.items() if kind in request.options]
        picked = await self._choose(f"deepacp wants to run: {request.title}", offered)
        return SHELL_CHOICES.get(picked or "Deny", "reject_once")

    async def ask(self, question: Question) -> str | None:
        if question.choices:
            picked = await self._choose(question.question, list(question.choices))
            if picked is not None:
                return picked
        return ASK_IN_CHAT


def lsp_sandbox(configured: SandboxPolicy) -> SandboxPolicy:
    """The policy of the LSP face's commands: nothing reaches the disk before the user
    accepts a proposal, so commands may not write the workspace either (`off` stays off).
    Where the kernel allows it they write an overlay of it instead, and that joins the
    proposal (`deepacp.backends.proposal_shell`)."""
    return "off" if configured == "off" else "read-only"


def overlay_notice(policy: SandboxPolicy) -> str | None:
    """What to tell the user when this run's commands will not see its proposal."""
    problem = None if policy == "off" else overlay_problem()
    if problem is None:
        return None
    return (
        f"deepacp: commands run on the files on disk, not on the proposal: {problem}. "
        "A test run there tests the code before the proposed changes."
    )


def _selection(args: EditArgs, text: str | None) -> str:
    if args.range is None or text is None:
        return ""
    lines = text.splitlines(keepends=True)
    start, end = args.range.start.line, max(args.range.end.line, args.range.start.line)
    chosen = "".join(lines[start : end + 1])
    return f", lines {start + 1}-{end + 1}:\n```\n{chosen}```"


async def run_edit(ls: EditorHost, run_id: str, args: EditArgs, target: Path, root: Path) -> dict:
    """Run the agent on `target` (in the workspace `root`) and make its edits the active
    proposal. Cancelled, it keeps the edits made so far as a partial proposal."""
    from deepacp.models import check_provider, configured_spec, resolve_model
    from deepacp.session import SessionManager, Workspace, open_store

    spec = configured_spec(ls.options.model)
    check_provider(spec)
    overlays: list[OverlayBackend] = []

    def view(disk):
        overlay = OverlayBackend(disk, ls.open_text)
        overlays.append(overlay)
        return overlay

    token = f"deepacp-{run_id}" if ls.support.progress else None
    handler = LspHandler(ls, token)
    sandbox = lsp_sandbox(sandbox_policy(ls.sandbox_flag))
    if notice := overlay_notice(sandbox):
        ls.window_log_message(T.LogMessageParams(type=T.MessageType.Warning, message=notice))
    manager = SessionManager(
        open_store(deepacp_home()), resolve_model, sandbox=sandbox, profile=ls.profile_flag
    )
    stop: str | None = None  # None: the run failed
    relative = target.relative_to(root).as_posix() if target.is_relative_to(root) else str(target)
    prompt = PROMPT.format(
        instruction=args.instruction,
        path=relative,
        selection=_selection(args, ls.open_text(target)),
    )
    try:
        if token is not None:
            await _begin_progress(ls, token, args.instruction)
        # The rejected and stale hunks of the proposals here: the run builds on the rest.
        review = review_since(
            list(ls.proposals.values()), root, lambda c: ls.current(c)[0], ls.display_name
        )
        workspace = Workspace(str(root), view=view, review=review)
        async with manager.ephemeral(workspace, "accept-edits", spec, handler) as session:
            stop = await session.prompt(prompt)
    except asyncio.CancelledError:
        stop = "cancelled"
        asyncio.current_task().uncancel()  # type: ignore[union-attr]  # always in a task
    finally:
        if token is not None:
            ended = "failed" if stop is None else stop if stop == "cancelled" else "done"
            ls.work_done_progress.end(token, T.WorkDoneProgressEnd(message=ended))
        await manager.shutdown()
    changes = {}
    for overlay in overlays:
        for path, (old, new) in overlay.changes().items():
            disk = overlay.disk_path(path)
            changes[disk.as_uri()] = (str(disk), old, new)
    proposal = make_proposal(f"p{next(_proposal_ids)}", changes)
    proposal.rationale = handler.summary
    proposal.partial = stop == "cancelled"
    proposal.instruction = args.instruction
    attach_notes(proposal, handler.notes)
    if proposal.files:  # beside the others: a run that ends while another runs drops none
        ls.add_proposal(proposal)
    ls.publish()
    ls.notify_user(outcome_message(proposal, ls.display_name, list(ls.proposals.values())))
    return {
        "run": run_id,
        "stop": stop,
        "cancelled": stop == "cancelled",
        "partial": proposal.partial and bool(proposal.files),
        "proposal": proposal.id if proposal.files else None,
        "files": sorted(proposal.files),
        "hunks": sum(len(f.hunks) for f in proposal.files.values()),
        "summary": proposal.rationale,
    }


async def _begin_progress(ls: EditorHost, token: str, instruction: str) -> None:
    """Progress the user can cancel (which cancels this run)."""
    await ls.work_done_progress.create_async(token)
    begin = T.WorkDoneProgressBegin(title="deepacp", message=instruction, cancellable=True)
    ls.work_done_progress.begin(token, begin)
    task = asyncio.current_task()
    ls.work_done_progress.tokens[token].add_done_callback(
        lambda future: future.cancelled() and task is not None and task.cancel()
    )
