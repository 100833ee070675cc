"""How a proposal is shown in an editor, decided from its capabilities. Pure functions.

Tiers: every editor gets a hint over each changed range saying what that change does, a
hover with the hunk's diff, and code actions that carry the edit itself; clients that
declare change-annotation support also get "Review in editor" (one annotated
`workspace/applyEdit` that needs confirmation: VS Code's refactor preview); code lenses
are opt-in. The messages the server shows the user are worded here too.
"""

from __future__ import annotations

from collections.abc import Callable

from lsprotocol import types as T

from deepacp.diffs import hunk_diff
from deepacp.lsp.capabilities import ClientSupport, Tier
from deepacp.lsp.edits import (
    Documents,
    Left,
    file_edit,
    hunk_range,
    lines_of,
    proposal_edits,
    workspace_edit,
)
from deepacp.lsp.proposal import FileChange, Hunk, Proposal, locate

SOURCE = "deepacp"
PARTIAL = "partial: the run was cancelled"
STALE = "the text under it changed since it was proposed"

ACCEPTED = "deepacp.accepted"  # bookkeeping after a code action's edit was applied
ACCEPTED_PROPOSAL = "deepacp.acceptedProposal"
ACCEPT_HUNK = "deepacp.acceptHunk"
ACCEPT_FILE = "deepacp.acceptFile"
ACCEPT_PROPOSAL = "deepacp.acceptProposal"
REJECT_HUNK = "deepacp.rejectHunk"
REJECT_PROPOSAL = "deepacp.rejectProposal"
SHOW_DIFF = "deepacp.showDiff"
REVIEW = "deepacp.review"

Name = Callable[[str], str]
"""The name to show for a file (by absolute path): workspace-relative where it can be."""


def located(change: FileChange, current: str) -> list[tuple[Hunk, int | None]]:
    lines = lines_of(current)
    return [(h, locate(change, h, lines)) for h in change.pending]


def summary(proposal: Proposal) -> str:
    first = proposal.rationale.strip().splitlines()
    return first[0][:200] if first else "a change proposed by deepacp"


def what_it_does(change: FileChange, hunk: Hunk) -> str:
    """One line: the agent's reason for this hunk, else the first line it changes."""
    if hunk.note:
        return hunk.note.strip().splitlines()[0][:200]
    first = hunk.first_change[:200]
    if change.created:
        return f"new file: {first}" if first else "new empty file"
    if change.deleted:
        return "delete this file"
    return first if hunk.new_lines else f"remove {first}"


def diagnostics(proposal: Proposal, change: FileChange, current: str) -> list[T.Diagnostic]:
    out = []
    partial = f" ({PARTIAL})" if proposal.partial else ""
    for hunk, at in located(change, current):
        if at is None:
            message = f"deepacp: this proposed change no longer matches the text (stale){partial}"
            at, severity = (
                min(hunk.start, max(0, len(lines_of(current)) - 1)),
                T.DiagnosticSeverity.Warning,
            )
        else:
            lead = "deepacp" if hunk.note else "deepacp proposes"
            message = f"{lead}{partial}: {what_it_does(change, hunk)}"
            severity = T.DiagnosticSeverity.Hint
        out.append(
            T.Diagnostic(
                range=hunk_range(at, hunk)
                if hunk.old_lines
                else T.Range(T.Position(at, 0), T.Position(at, 0)),
                message=message,
                severity=severity,
                source=SOURCE,
                code="proposal",
                data={"proposal": proposal.id, "hunk": hunk.id},
            )
        )
    return out


def hover(
    proposal: Proposal, change: FileChange, current: str, line: int, name: Name
) -> T.Hover | None:
    """The hunk under `line` as a diff against the document as it is now."""
    placed = located(change, current)
    for hunk, at in placed:
        if at is not None and at <= line <= at + max(len(hunk.old_lines) - 1, 0):
            shift = sum(h.delta for h, other in placed if other is not None and other < at)
            diff = hunk_diff(
                name(change.path),
                hunk.old_lines,
                hunk.new_lines,
                at,
                at + shift,
                created=change.created,
                deleted=change.deleted,
            )
            body = f"**deepacp** — {what_it_does(change, hunk)}"
            if proposal.partial:
                body += f" ({PARTIAL})"
            body += f"\n\n```diff\n{diff}```"
            if proposal.rationale.strip() and proposal.rationale.strip() != hunk.note.strip():
                body += f"\n\n{proposal.rationale.strip()}"
            return T.Hover(T.MarkupContent(T.MarkupKind.Markdown, body), hunk_range(at, hunk))
    return None


def annotated_edit(
    proposal: Proposal, documents: Documents, support: ClientSupport
) -> tuple[T.WorkspaceEdit | None, dict[str, list[str]]]:
    """Everything pending as one annotated edit that needs confirmation, and the hunk ids
    it covers per file."""
    parts = proposal_edits(proposal, documents, support)
    label = T.ChangeAnnotation(
        label=summary(proposal), needs_confirmation=True, description=proposal.rationale
    )
    edit = workspace_edit(parts, support, ("deepacp", label))
    return edit, {p.uri: list(p.covered) for p in parts if p.covered}


def command(title: str, name: str, *arguments: object) -> T.Command:
    return T.Command(title=title, command=name, arguments=list(arguments))


def _reject(proposal: Proposal, change: FileChange, hunk: Hunk, title: str) -> T.CodeAction:
    return T.CodeAction(
        title=title,
        kind=T.CodeActionKind.QuickFix,
        command=command("Reject hunk", REJECT_HUNK, proposal.id, change.uri, hunk.id),
    )


def code_actions(
    proposal: Proposal,
    change: FileChange,
    documents: Documents,
    selection: T.Range,
    support: ClientSupport,
    tiers: set[Tier],
) -> list[T.CodeAction]:
    """Accept / reject actions for the hunks under `selection`, the file and the proposal.
    Accepting carries the edit itself, so the editor applies it natively."""
    current, version = documents[change.uri]
    current = current or ""
    actions: list[T.CodeAction] = []
    under = [
        (h, at)
        for h, at in located(change, current)
        if (at if at is not None else h.start) <= selection.end.line
        and selection.start.line
        <= (at if at is not None else h.start) + max(len(h.old_lines) - 1, 0)
    ]
    for hunk, at in under:
        part = file_edit(change, current, version, support, {hunk.id})
        edit = workspace_edit([part], support)
        if edit is None:
            why = (
                "the text changed since it was proposed"
                if at is None
                else "this editor cannot delete files for deepacp"
            )
            actions.append(_reject(proposal, change, hunk, f"deepacp: reject hunk ({why})"))
            continue
        actions.append(
            T.CodeAction(
                title="deepacp: Accept this hunk",
                kind=T.CodeActionKind.QuickFix,
                edit=edit,
                command=command("Accepted", ACCEPTED, proposal.id, change.uri, list(part.covered)),
                is_preferred=True,
            )
        )
        actions.append(_reject(proposal, change, hunk, "deepacp: Reject hunk"))
    part = file_edit(change, current, version, support)
    if (edit := workspace_edit([part], support)) is not None:
        actions.append(
            T.CodeAction(
                title="deepacp: Accept all in file",
                kind=T.CodeActionKind.QuickFix,
                edit=edit,
                command=command("Accepted", ACCEPTED, proposal.id, change.uri, list(part.covered)),
            )
        )
    parts = proposal_edits(proposal, documents, support)
    if (everything := workspace_edit(parts, support)) is not None:
        covered = {p.uri: list(p.covered) for p in parts if p.covered}
        actions.append(
            T.CodeAction(
                title="deepacp: Accept proposal",
                kind=T.CodeActionKind.QuickFix,
                edit=everything,
                command=command("Accepted", ACCEPTED_PROPOSAL, proposal.id, covered),
            )
        )
    if "annotated" in tiers:
        actions.append(
            T.CodeAction(
                title="deepacp: Review in editor",
                kind=T.CodeActionKind.Refactor,
                command=command("Review in editor", REVIEW, proposal.id),
            )
        )
    actions.append(
        T.CodeAction(
            title="deepacp: Reject proposal",
            kind=T.CodeActionKind.QuickFix,
            command=command("Reject proposal", REJECT_PROPOSAL, proposal.id),
        )
    )
    actions.append(
        T.CodeAction(
            title="deepacp: Show diff",
            kind=T.CodeActionKind.QuickFix,
            command=command("Show diff", SHOW_DIFF, proposal.id),
        )
    )
    return actions


def code_lenses(proposal: Proposal, change: FileChange, current: str) -> list[T.CodeLens]:
    lenses = []
    for hunk, at in located(change, current):
        if at is None:
            continue
        where = T.Range(T.Position(at, 0), T.Position(at, 0))
        lenses.append(
            T.CodeLens(where, command("Accept", ACCEPT_HUNK, proposal.id, change.uri, hunk.id))
        )
        lenses.append(
            T.CodeLens(where, command("Discard", REJECT_HUNK, proposal.id, change.uri, hunk.id))
        )
    return lenses


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _file_names(proposal: Proposal, uris: list[str], name: Name) -> str:
    def shown(uri: str) -> str:
        change = proposal.files[uri]
        extra = " (new)" if change.created else " (deleted)" if change.deleted else ""
        return name(change.path) + extra

    return ", ".join(shown(uri) for uri in uris)


def outcome_message(proposal: Proposal, name: Name) -> str:
    """What an edit request came to, in one message."""
    hunks = sum(len(f.hunks) for f in proposal.files.values())
    said = f": {summary(proposal)}" if proposal.rationale.strip() else ""
    if proposal.partial:
        if not hunks:
            return "deepacp: cancelled before anything was proposed"
        return (
            f"deepacp: cancelled; the {_count(hunks, 'change')} made before that are kept as a "
            f"partial proposal in {_file_names(proposal, list(proposal.files), name)}"
        )
    if not hunks:
        return f"deepacp: no change proposed{said}"
    return (
        f"deepacp proposes {_count(hunks, 'change')} in "
        f"{_file_names(proposal, list(proposal.files), name)}{said}"
    )


def _where(left: Left, proposal: Proposal, name: Name) -> str:
    change = proposal.files[left.uri]
    if left.reason == "delete":
        return f"{name(change.path)} (to delete: this editor cannot delete files for deepacp)"
    place = f"{name(change.path)} line {left.line + 1}"
    return f"{place} (stale: {STALE})" if left.reason == "stale" else place


def accept_message(proposal: Proposal, accepted: list[str], left: list[Left], name: Name) -> str:
    """What an accept put into the editor (nothing is saved until the user saves) and, when
    something is still pending, what and where."""
    if not accepted and not left:
        return "deepacp: nothing left to accept in this proposal"
    if accepted:
        files = _file_names(proposal, accepted, name)
        message = f"deepacp: accepted into the editor, not saved yet: {files}"
    else:
        message = "deepacp: nothing accepted"
    if left:
        message += f"; still pending: {'; '.join(_where(x, proposal, name) for x in left)}"
    return message
