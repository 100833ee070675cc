"""Accepting through the editor: an accept claims the chosen pending hunks (so a second
accept of them sends nothing), sends one edit per file, naming the document version it was
made for, and counts each file once the editor's text shows its edit (`applying.py`). One
message then says what the editor holds, what it did not apply and why, and what is still
pending where."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from lsprotocol import types as T

from deepacp.lsp import edits, messages, review
from deepacp.lsp.applying import Application
from deepacp.lsp.language_server import Answered, DeepacpLanguageServer
from deepacp.lsp.proposal import Proposal


def report(
    ls: DeepacpLanguageServer,
    proposal: Proposal,
    accepted: list[str],
    not_applied: list[tuple[str, str]],
    uris: list[str],
) -> dict:
    """Tell the user what the editor now holds of the proposal, what it did not apply and
    why, and what is still pending in `uris` (found in the documents as they are now)."""
    ls.publish()
    documents = ls.documents_for(proposal)
    left = [
        x
        for x in edits.outstanding(proposal, documents, ls.support)
        if x.uri in uris and x.uri not in dict(not_applied)
    ]
    message = messages.accept_message(proposal, accepted, left, ls.display_name, not_applied)
    warn = left or not_applied
    ls.notify_user(message, T.MessageType.Warning if warn else T.MessageType.Info)
    return {
        "applied": bool(accepted),
        "files": accepted,
        "not_applied": [
            {"file": ls.display_name(proposal.files[u].path), "reason": why}
            for u, why in not_applied
        ],
        "left": [
            {
                "file": ls.display_name(proposal.files[x.uri].path),
                "line": x.line + 1,
                "reason": x.reason,
            }
            for x in left
        ],
    }


async def accept_hunk(ls: DeepacpLanguageServer, proposal_id: str, uri: str, hunk_id: str) -> dict:
    return await _accept(ls, (proposal_id,), {uri: {hunk_id}}, "deepacp: accept")


async def accept_file(ls: DeepacpLanguageServer, proposal_id: str, uri: str) -> dict:
    return await _accept(ls, (proposal_id,), {uri: None}, "deepacp: accept")


async def accept_proposal(ls: DeepacpLanguageServer, *proposal_id: str) -> dict:
    """Apply everything still pending (in the latest open proposal when none is named)."""
    return await _accept(ls, proposal_id, None, "deepacp: accept proposal")


async def _accept(
    ls: DeepacpLanguageServer,
    proposal_id: tuple[str, ...],
    chosen: dict[str, set[str] | None] | None,
    label: str,
) -> dict:
    """Claim the chosen pending hunks (by file; None: all of the proposal's), send each
    file's edit, and report once the editor's text shows what it applied."""
    if (proposal := ls.active(proposal_id)) is None:
        return {"applied": False, "reason": "no such proposal"}
    if chosen is not None and any(uri not in proposal.files for uri in chosen):
        return {"applied": False, "reason": "no such proposal"}
    one_file = chosen is not None
    chosen = chosen if chosen is not None else dict.fromkeys(proposal.files)
    claims = _claim(ls, proposal, chosen)
    if not claims.parts:
        return _nothing_sent(ls, proposal, list(chosen), claims, one_file)
    for application, part in zip(claims.applications, claims.parts, strict=True):
        if (edit := edits.workspace_edit([part], ls.support)) is not None:  # never None here
            await ls.apply_edit(edit, label, _answered(ls, [application]))
    return await _settle(ls, proposal, claims.applications, list(chosen))


def _answered(ls: DeepacpLanguageServer, applications: list[Application]) -> Answered:
    """What to do with the editor's answer, the moment it is read (before any change the
    editor sent after it): settle the applications it decides."""

    def answered(applied: bool, why_not: str) -> None:
        for application in applications:
            document = ls.document(application.uri)
            text = document.source if document is not None else None
            ls.in_flight.answered(application, applied, why_not, text)

    return answered


@dataclass
class Claims:
    """What an accept took: each file's edit and its application, and what it could not."""

    parts: list[edits.FileEdit] = field(default_factory=list)
    applications: list[Application] = field(default_factory=list)
    busy: list[str] = field(default_factory=list)
    """Files whose chosen hunks are being applied already."""
    refusals: list[edits.FileEdit] = field(default_factory=list)


def _claim(
    ls: DeepacpLanguageServer, proposal: Proposal, chosen: dict[str, set[str] | None]
) -> Claims:
    """Claim the chosen pending hunks that apply, file by file. No await here: every claim
    is made before the first edit is sent, so an accept that arrives meanwhile finds these
    hunks being applied and sends nothing."""
    out = Claims()
    for uri, ids in chosen.items():
        change = proposal.files[uri]
        current, version = ls.current(change)
        part = edits.file_edit(change, current, version, ls.support, ids)
        if part.empty:
            wanted = [h for h in change.hunks if ids is None or h.id in ids]
            if any(h.state == "applying" for h in wanted):
                out.busy.append(uri)
            elif part.left:
                out.refusals.append(part)
            continue
        claimed = change.claim(part.covered)
        application = Application(proposal, change, claimed, current or "", part.after)
        ls.in_flight.add(application)
        out.parts.append(part)
        out.applications.append(application)
    return out


async def _settle(
    ls: DeepacpLanguageServer,
    proposal: Proposal,
    applications: Sequence[Application],
    uris: list[str],
) -> dict:
    """Wait for the editor's text to show each edit, or not, and say which."""
    accepted_now: list[str] = []
    not_applied: list[tuple[str, str]] = []
    for application in applications:
        if await application.outcome:
            accepted_now.append(application.uri)
        else:
            not_applied.append((application.uri, application.why_not))
    return report(ls, proposal, sorted(set(accepted_now)), not_applied, uris)


def _nothing_sent(
    ls: DeepacpLanguageServer,
    proposal: Proposal,
    uris: list[str],
    claims: Claims,
    one_file: bool = False,
) -> dict:
    """An accept that sent nothing: its hunks are being applied already, or (one file)
    why that file's change cannot apply, or what is still pending where."""
    if claims.busy:
        ls.notify_user(messages.busy_message(proposal, claims.busy, ls.display_name))
        return {"applied": False, "reason": "already being applied"}
    if one_file and claims.refusals:
        part = claims.refusals[0]
        name = ls.display_name(proposal.files[part.uri].path)
        ls.notify_user(messages.refusal_message(part.refusal, name), T.MessageType.Warning)
        return {"applied": False, "reason": part.refusal}
    return report(ls, proposal, [], [], uris)


async def review_in_editor(ls: DeepacpLanguageServer, proposal_id: str) -> dict:
    """One annotated edit needing confirmation (VS Code opens its refactor preview, where
    the user may leave some changes out: each file counts as its text shows it)."""
    if (proposal := ls.active((proposal_id,))) is None:
        return {"applied": False}
    claims = _claim(ls, proposal, dict.fromkeys(proposal.files))
    annotation = review.annotation(proposal)
    edit = edits.workspace_edit(claims.parts, ls.support, annotation)
    if edit is None:
        return _nothing_sent(ls, proposal, list(proposal.files), claims)
    await ls.apply_edit(edit, f"deepacp: {proposal.summary}", _answered(ls, claims.applications))
    outcome = await _settle(ls, proposal, claims.applications, [])
    return {**outcome, "applied": bool(outcome["files"])}
