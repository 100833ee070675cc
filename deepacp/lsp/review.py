"""How a proposal is shown in an editor, decided from its capabilities. Pure functions.

Tiers: every editor gets a hint over each changed range saying what that change does, a
hover with the hunk's diff, and code actions that carry the edit itself; clients that
declare change-annotation support also get "Review in editor" (one annotated
`workspace/applyEdit` that needs confirmation: VS Code's refactor preview); code lenses
are opt-in. What the server says in words is in `messages.py`.
"""

from __future__ import annotations

from lsprotocol import types as T

from deepacp.diffs import hunk_diff
from deepacp.lsp.applying import digest
from deepacp.lsp.capabilities import ClientSupport, Tier
from deepacp.lsp.edits import (
    Documents,
    FileEdit,
    file_edit,
    hunk_range,
    proposal_edits,
    workspace_edit,
)
from deepacp.lsp.messages import Name
from deepacp.lsp.proposal import FileChange, Hunk, Proposal

SOURCE = "deepacp"
PARTIAL = "partial: the run was cancelled"

ACCEPTED = "deepacp.accepted"  # bookkeeping after a code action's edit was applied
ACCEPTED_PROPOSAL = "deepacp.acceptedProposal"
ACCEPT_HUNK = "deepacp.acceptHunk"
ACCEPT_FILE = "deepacp.acceptFile"
ACCEPT_PROPOSAL = "deepacp.acceptProposal"
REJECT_HUNK = "deepacp.rejectHunk"
REJECT_PROPOSAL = "deepacp.rejectProposal"
SHOW_DIFF = "deepacp.showDiff"
REVIEW = "deepacp.review"


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
    """A hint per open hunk (one being applied keeps its hint until the editor's text shows
    it, unless its text is gone already)."""
    out = []
    partial = f" ({PARTIAL})" if proposal.partial else ""
    for place in change.placed(current, change.open):
        hunk = place.hunk
        if place.stale and hunk.state == "applying":
            continue
        if place.stale:
            message = f"deepacp: this proposed change no longer matches the text (stale){partial}"
            severity = T.DiagnosticSeverity.Warning
        else:
            lead = "deepacp" if hunk.note else "deepacp proposes"
            message = f"{lead}{partial}: {what_it_does(change, hunk)}"
            severity = T.DiagnosticSeverity.Hint
        out.append(
            T.Diagnostic(
                range=hunk_range(place.line, hunk)
                if hunk.old_lines
                else T.Range(T.Position(place.row, 0), T.Position(place.row, 0)),
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
    found = [p for p in change.placed(current) if not p.stale]
    for place in found:
        hunk, at, row = place.hunk, place.line, place.row
        if row <= line <= at + max(len(hunk.old_lines) - 1, 0):
            shift = sum(other.hunk.delta for other in found if other.line < at)
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
            return T.Hover(T.MarkupContent(T.MarkupKind.Markdown, body), hunk_range(row, hunk))
    return None


def annotation(proposal: Proposal) -> tuple[str, T.ChangeAnnotation]:
    """The annotation that makes an edit of `proposal` need the user's confirmation."""
    label = T.ChangeAnnotation(
        label=proposal.summary, needs_confirmation=True, description=proposal.rationale
    )
    return "deepacp", label


def annotated_edit(
    proposal: Proposal, documents: Documents, support: ClientSupport
) -> tuple[T.WorkspaceEdit | None, dict[str, list[str]]]:
    """Everything pending as one annotated edit that needs confirmation, and the hunk ids
    it covers per file."""
    parts = proposal_edits(proposal, documents, support)
    edit = workspace_edit(parts, support, annotation(proposal))
    return edit, {p.uri: list(p.covered) for p in parts if p.covered}


def command(title: str, name: str, *arguments: object) -> T.Command:
    return T.Command(title=title, command=name, arguments=list(arguments))


def _accepted(proposal: Proposal, part: FileEdit, current: str) -> T.Command:
    """The bookkeeping after an accept action's edit: its hunks, and the text before and
    after it (digests), which the server checks against the editor's text."""
    texts = [digest(current), digest(part.after or "")]
    ids = list(part.covered)
    return command("Accepted", ACCEPTED, proposal.id, part.uri, ids, *texts)


def _quick_fix(
    title: str,
    run: T.Command,
    edit: T.WorkspaceEdit | None = None,
    preferred: bool | None = None,
) -> T.CodeAction:
    """A quick fix that applies `edit` (if any), then runs `run`; None is not sent."""
    return T.CodeAction(
        title=title, kind=T.CodeActionKind.QuickFix, edit=edit, command=run, is_preferred=preferred
    )


def _reject(proposal: Proposal, change: FileChange, hunk: Hunk, title: str) -> T.CodeAction:
    return _quick_fix(title, command("Reject hunk", REJECT_HUNK, proposal.id, change.uri, hunk.id))


def code_actions(
    proposal: Proposal,
    change: FileChange,
    documents: Documents,
    selection: T.Range,
    support: ClientSupport,
    tiers: set[Tier],
    named: bool = False,
) -> list[T.CodeAction]:
    """Accept / reject actions for the hunks under `selection`, the file and the proposal.
    Accepting carries the edit itself, so the editor applies it natively, and its
    bookkeeping command carries the text before and after it, so the server counts it only
    if the editor's text shows it. `named`: another proposal has hunks in this file too, so
    each title says which proposal it is about."""
    current, version = documents[change.uri]
    current = current or ""
    named_as = f" ({proposal.label})" if named else ""
    actions: list[T.CodeAction] = []
    under = [
        p
        for p in change.placed(current)
        if p.row <= selection.end.line
        and selection.start.line <= p.row + max(len(p.hunk.old_lines) - 1, 0)
    ]
    for place in under:
        hunk = place.hunk
        part = file_edit(change, current, version, support, {hunk.id})
        edit = workspace_edit([part], support)
        if edit is None:
            why = (
                "the text changed since it was proposed"
                if place.stale
                else "this editor cannot delete files for deepacp"
            )
            actions.append(
                _reject(proposal, change, hunk, f"deepacp: reject hunk ({why}){named_as}")
            )
            continue
        accepted = _accepted(proposal, part, current)
        actions.append(
            _quick_fix(f"deepacp: Accept this hunk{named_as}", accepted, edit, preferred=True)
        )
        actions.append(_reject(proposal, change, hunk, f"deepacp: Reject hunk{named_as}"))
    part = file_edit(change, current, version, support)
    if (edit := workspace_edit([part], support)) is not None:
        accepted = _accepted(proposal, part, current)
        actions.append(_quick_fix(f"deepacp: Accept all in file{named_as}", accepted, edit))
    parts = proposal_edits(proposal, documents, support)
    if (everything := workspace_edit(parts, support)) is not None:
        covered = {p.uri: list(p.covered) for p in parts if p.covered}
        texts = {
            p.uri: [digest(documents[p.uri][0] or ""), digest(p.after or "")]
            for p in parts
            if p.covered
        }
        accepted = command("Accepted", ACCEPTED_PROPOSAL, proposal.id, covered, texts)
        actions.append(_quick_fix(f"deepacp: Accept proposal{named_as}", accepted, everything))
    if "annotated" in tiers:
        actions.append(
            T.CodeAction(
                title="deepacp: Review in editor",
                kind=T.CodeActionKind.Refactor,
                command=command("Review in editor", REVIEW, proposal.id),
            )
        )
    reject = command("Reject proposal", REJECT_PROPOSAL, proposal.id)
    actions.append(_quick_fix(f"deepacp: Reject proposal{named_as}", reject))
    show = command("Show diff", SHOW_DIFF, proposal.id)
    actions.append(_quick_fix(f"deepacp: Show diff{named_as}", show))
    return actions


def code_lenses(proposal: Proposal, change: FileChange, current: str) -> list[T.CodeLens]:
    lenses = []
    for place in change.placed(current):
        if place.stale:
            continue
        hunk, where = place.hunk, T.Range(T.Position(place.row, 0), T.Position(place.row, 0))
        lenses.append(
            T.CodeLens(where, command("Accept", ACCEPT_HUNK, proposal.id, change.uri, hunk.id))
        )
        lenses.append(
            T.CodeLens(where, command("Discard", REJECT_HUNK, proposal.id, change.uri, hunk.id))
        )
    return lenses
