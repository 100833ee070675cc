"""How a proposal is shown and applied in an editor, decided from its capabilities.

Tiers: every editor gets diagnostics over the changed lines, a hover with the hunk's
diff, and code actions that carry the edit itself; clients that declare change-annotation
support also get "Review in editor" (one annotated `workspace/applyEdit` that needs
confirmation: VS Code's refactor preview); code lenses are opt-in. Pure functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lsprotocol import types as T

from deepacp.lsp.proposal import FileChange, Hunk, Proposal, locate

SOURCE = "deepacp"
Tier = Literal["diagnostics", "annotated", "lens"]

ACCEPTED = "deepacp.accepted"  # bookkeeping after a code action's edit was applied
ACCEPTED_PROPOSAL = "deepacp.acceptedProposal"  # ... and the files the client cannot create
ACCEPT_HUNK = "deepacp.acceptHunk"
ACCEPT_FILE = "deepacp.acceptFile"
ACCEPT_PROPOSAL = "deepacp.acceptProposal"
REJECT_HUNK = "deepacp.rejectHunk"
REJECT_PROPOSAL = "deepacp.rejectProposal"
SHOW_DIFF = "deepacp.showDiff"
REVIEW = "deepacp.review"


@dataclass(frozen=True)
class ClientSupport:
    document_changes: bool
    create_files: bool
    delete_files: bool
    annotations: bool
    show_document: bool
    show_message_request: bool
    progress: bool
    code_lens: bool


def client_support(caps: T.ClientCapabilities) -> ClientSupport:
    workspace = caps.workspace
    edit = workspace.workspace_edit if workspace else None
    operations = set(edit.resource_operations or []) if edit else set()
    window = caps.window
    document = caps.text_document
    return ClientSupport(
        document_changes=bool(edit and edit.document_changes),
        create_files=T.ResourceOperationKind.Create in operations,
        delete_files=T.ResourceOperationKind.Delete in operations,
        annotations=bool(edit and edit.change_annotation_support and edit.document_changes),
        show_document=bool(window and window.show_document and window.show_document.support),
        show_message_request=bool(window and window.show_message),
        progress=bool(window and window.work_done_progress),
        code_lens=bool(document and document.code_lens),
    )


def review_tiers(support: ClientSupport, preference: str = "auto") -> set[Tier]:
    """Which review surfaces to offer. Diagnostics and code actions always work."""
    tiers: set[Tier] = {"diagnostics"}
    if support.annotations and preference in ("auto", "annotated"):
        tiers.add("annotated")
    if support.code_lens and preference == "lens":
        tiers.add("lens")
    return tiers


def lines_of(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def hunk_range(at: int, hunk: Hunk) -> T.Range:
    return T.Range(T.Position(at, 0), T.Position(at + len(hunk.old_lines), 0))


def hunk_edit(at: int, hunk: Hunk) -> T.TextEdit:
    return T.TextEdit(hunk_range(at, hunk), "".join(hunk.new_lines))


def located(change: FileChange, current: str) -> list[tuple[Hunk, int | None]]:
    lines = lines_of(current)
    return [(h, locate(change, h, lines)) for h in change.pending]


def summary(proposal: Proposal) -> str:
    first = proposal.rationale.strip().splitlines()
    return first[0][:200] if first else "a change proposed by deepacp"


def diagnostics(proposal: Proposal, change: FileChange, current: str) -> list[T.Diagnostic]:
    out = []
    for hunk, at in located(change, current):
        if at is None:
            message = "deepacp: this proposed change no longer matches the text (stale)"
            at, severity = (
                min(hunk.start, max(0, len(lines_of(current)) - 1)),
                T.DiagnosticSeverity.Warning,
            )
        else:
            message = f"deepacp proposes: {summary(proposal)}"
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


def hover(proposal: Proposal, change: FileChange, current: str, line: int) -> T.Hover | None:
    for hunk, at in located(change, current):
        if at is not None and at <= line <= at + max(len(hunk.old_lines) - 1, 0):
            body = f"**deepacp** — {proposal.rationale.strip() or 'proposed change'}\n\n```diff\n"
            body += hunk.diff(change.path) + "```"
            return T.Hover(T.MarkupContent(T.MarkupKind.Markdown, body), hunk_range(at, hunk))
    return None


def _document_edit(
    uri: str, version: int | None, edits: list, support: ClientSupport
) -> T.WorkspaceEdit:
    if support.document_changes:
        identifier = T.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        return T.WorkspaceEdit(document_changes=[T.TextDocumentEdit(identifier, edits)])
    return T.WorkspaceEdit(changes={uri: edits})


def file_edit(
    change: FileChange,
    current: str,
    version: int | None,
    support: ClientSupport,
    hunk_ids: set[str] | None = None,
) -> tuple[T.WorkspaceEdit | None, list[str]]:
    """The edit applying the chosen pending hunks (all when `hunk_ids` is None) of a file
    that exists in the editor, and the ids it covers; stale hunks are left out."""
    edits, covered = [], []
    for hunk, at in located(change, current):
        if (hunk_ids is None or hunk.id in hunk_ids) and at is not None:
            edits.append(hunk_edit(at, hunk))
            covered.append(hunk.id)
    if not edits:
        return None, []
    return _document_edit(change.uri, version, edits, support), covered


Documents = dict[str, tuple[str | None, int | None]]
"""uri -> (the file's text now, its editor version); None text: the file does not exist."""


def proposal_edit(
    proposal: Proposal, documents: Documents, support: ClientSupport
) -> tuple[T.WorkspaceEdit, dict[str, list[str]], list[FileChange]]:
    """One edit for everything still pending: hunk edits, and new or deleted files where the
    client can do file operations. Returns it, the hunk ids it covers per file, and the
    file changes the server must write itself (the client cannot create or delete)."""
    document_changes: list = []
    plain: dict[str, list[T.TextEdit]] = {}
    covered: dict[str, list[str]] = {}
    by_server: list[FileChange] = []
    for uri, change in proposal.files.items():
        if not change.pending:
            continue
        current, version = documents.get(uri, (None, None))
        creating = change.old_text is None and current is None
        deleting = change.new_text is None
        if creating or deleting:
            allowed = support.create_files if creating else support.delete_files
            if not (allowed and support.document_changes):
                by_server.append(change)
                covered[uri] = [h.id for h in change.pending]
                continue
            if creating:
                document_changes.append(T.CreateFile(uri=uri, kind="create"))
                identifier = T.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None)
                insert = T.TextEdit(
                    T.Range(T.Position(0, 0), T.Position(0, 0)), change.new_text or ""
                )
                document_changes.append(T.TextDocumentEdit(identifier, [insert]))
            else:
                document_changes.append(T.DeleteFile(uri=uri, kind="delete"))
            covered[uri] = [h.id for h in change.pending]
            continue
        edits, ids = [], []
        for hunk, at in located(change, current or ""):
            if at is not None:
                edits.append(hunk_edit(at, hunk))
                ids.append(hunk.id)
        if not edits:
            continue
        covered[uri] = ids
        if support.document_changes:
            identifier = T.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
            document_changes.append(T.TextDocumentEdit(identifier, edits))
        else:
            plain[uri] = edits
    edit = (
        T.WorkspaceEdit(document_changes=document_changes)
        if support.document_changes
        else T.WorkspaceEdit(changes=plain)
    )
    return edit, covered, by_server


def annotated_edit(proposal: Proposal, documents: Documents) -> T.WorkspaceEdit:
    """All pending hunks of existing files as annotated edits that need confirmation."""
    annotation = "deepacp"
    changes: list = []
    for uri, change in proposal.files.items():
        if uri not in documents:
            continue
        current, version = documents[uri]
        if current is None:
            continue
        edits = [
            T.AnnotatedTextEdit(
                annotation_id=annotation, range=hunk_range(at, h), new_text="".join(h.new_lines)
            )
            for h, at in located(change, current)
            if at is not None
        ]
        if edits:
            identifier = T.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
            changes.append(T.TextDocumentEdit(identifier, edits))
    label = T.ChangeAnnotation(
        label=summary(proposal), needs_confirmation=True, description=proposal.rationale
    )
    return T.WorkspaceEdit(document_changes=changes, change_annotations={annotation: label})


def command(title: str, name: str, *arguments: object) -> T.Command:
    return T.Command(title=title, command=name, arguments=list(arguments))


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
        if at is None:
            actions.append(
                T.CodeAction(
                    title="deepacp: reject stale hunk (the text changed since it was proposed)",
                    kind=T.CodeActionKind.QuickFix,
                    command=command("Reject hunk", REJECT_HUNK, proposal.id, change.uri, hunk.id),
                )
            )
            continue
        edit, covered = file_edit(change, current, version, support, {hunk.id})
        actions.append(
            T.CodeAction(
                title="deepacp: Accept this hunk",
                kind=T.CodeActionKind.QuickFix,
                edit=edit,
                command=command("Accepted", ACCEPTED, proposal.id, change.uri, covered),
                is_preferred=True,
            )
        )
        actions.append(
            T.CodeAction(
                title="deepacp: Reject hunk",
                kind=T.CodeActionKind.QuickFix,
                command=command("Reject hunk", REJECT_HUNK, proposal.id, change.uri, hunk.id),
            )
        )
    edit, covered = file_edit(change, current, version, support)
    if edit is not None:
        actions.append(
            T.CodeAction(
                title="deepacp: Accept all in file",
                kind=T.CodeActionKind.QuickFix,
                edit=edit,
                command=command("Accepted", ACCEPTED, proposal.id, change.uri, covered),
            )
        )
    everything, covered_all, by_server = proposal_edit(proposal, documents, support)
    actions.append(
        T.CodeAction(
            title="deepacp: Accept proposal",
            kind=T.CodeActionKind.QuickFix,
            edit=everything,
            command=command(
                "Accepted", ACCEPTED_PROPOSAL, proposal.id, covered_all, [c.uri for c in by_server]
            ),
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
