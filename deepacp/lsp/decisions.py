"""The user's decisions on a proposal: accept (a hunk, a file, all of it), reject, review
in the editor, show the diff. The server never writes a project file: accepting asks the
editor to apply the change to its buffers, and the user saves. The hunks' states are the
proposal's (`Proposal.accept`, `Proposal.reject`, claimed and settled through
`applying.py`); these commands are the glue. An accept counts only once the editor's text
shows it; each sends one edit per file, so an editor's "no" is about one file's edit."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types as T

from deepacp.lsp import edits, messages, review
from deepacp.lsp.applying import Application, digest
from deepacp.lsp.language_server import Answered, DeepacpLanguageServer
from deepacp.lsp.proposal import FileChange, Proposal, split_lines


def _report(
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


def _shown(
    ls: DeepacpLanguageServer,
    proposal: Proposal,
    change: FileChange,
    hunk_ids: list[str],
    texts: object,
) -> bool | Application:
    """Whether the editor's text of `change` shows the hunks a code action applied: its
    text is the one the action leaves (`texts`: digests of the text before and after it),
    else, when neither, each hunk looks applied. Still the text before: the editor may not
    have sent its change yet (eglot 1.9 runs the command first), so the hunks are claimed
    and the application returned, to settle on its next change."""
    current = ls.current(change)[0]
    if isinstance(texts, list | tuple) and len(texts) == 2 and current is not None:
        if digest(current) == texts[1]:
            return True
        if digest(current) == texts[0]:
            part = edits.file_edit(change, current, None, ls.support, set(hunk_ids))
            if not part.covered or digest(part.after or "") != texts[1]:
                return False
            application = Application(
                proposal, change, change.claim(part.covered), current, part.after
            )
            ls.in_flight.add(application)
            ls.in_flight.answered(application, True, "", current)
            return application
    lines = split_lines(current)
    return all(change.shows(h, lines) for h in change.hunks if h.id in hunk_ids)


def accepted(
    ls: DeepacpLanguageServer, proposal_id: str, uri: str, hunk_ids: list[str], *texts: str
) -> dict:
    """After the client applied an "Accept this hunk" or "Accept all in file" action: the
    hunks count as accepted once its text shows them (said when it does not)."""
    proposal = ls.active((proposal_id,))
    if proposal is None or (change := proposal.files.get(uri)) is None:
        return {"applied": False, "reason": "no such proposal"}
    shown = _shown(ls, proposal, change, hunk_ids, list(texts))
    if isinstance(shown, Application):
        ls.in_flight.spawn(_after_action(ls, proposal, [shown], single=True))
        return {"applied": False, "reason": "waiting for the editor's text"}
    if not shown:
        ls.publish()
        ls.notify_user(
            messages.unapplied_message(proposal, uri, ls.display_name), T.MessageType.Warning
        )
        return {"applied": False, "reason": "not in the editor's text"}
    proposal.accept({uri: hunk_ids})
    ls.publish()
    return {"applied": True, "hunks": hunk_ids}


def accepted_proposal(
    ls: DeepacpLanguageServer, proposal_id: str, covered: dict[str, list[str]], *texts: dict
) -> dict:
    """After the client applied an "Accept proposal" action: each file counts where the
    editor's text shows it, and what is left is found in the documents as they are now."""
    if (proposal := ls.active((proposal_id,))) is None:
        return {"applied": False, "reason": "no such proposal"}
    digests = texts[0] if texts and isinstance(texts[0], dict) else {}
    accepted_now, not_applied, waiting = [], [], []
    for uri, ids in covered.items():
        if (change := proposal.files.get(uri)) is None:
            continue
        shown = _shown(ls, proposal, change, ids, digests.get(uri))
        if isinstance(shown, Application):
            waiting.append(shown)
        elif shown:
            proposal.accept({uri: ids})
            accepted_now.append(uri)
        else:
            not_applied.append((uri, "its text does not show the change"))
    if waiting:
        done = (sorted(accepted_now), not_applied)
        ls.in_flight.spawn(_after_action(ls, proposal, waiting, done=done))
        return {"applied": False, "reason": "waiting for the editor's text"}
    return _report(ls, proposal, sorted(accepted_now), not_applied, list(proposal.files))


async def _after_action(
    ls: DeepacpLanguageServer,
    proposal: Proposal,
    waiting: list[Application],
    single: bool = False,
    done: tuple[list[str], list[tuple[str, str]]] = ([], []),
) -> None:
    """Once the editor's text settles what a code action applied, say so as at once."""
    accepted_now, not_applied = list(done[0]), list(done[1])
    for application in waiting:
        if await application.outcome:
            accepted_now.append(application.uri)
        else:
            not_applied.append((application.uri, application.why_not))
    if not single:
        _report(ls, proposal, sorted(accepted_now), not_applied, list(proposal.files))
        return
    ls.publish()
    if not_applied:
        uri = not_applied[0][0]
        message = messages.unapplied_message(proposal, uri, ls.display_name)
        ls.notify_user(message, T.MessageType.Warning)


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
    return _report(ls, proposal, sorted(set(accepted_now)), not_applied, uris)


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
    return _report(ls, proposal, [], [], uris)


def reject_hunk(ls: DeepacpLanguageServer, proposal_id: str, uri: str, hunk_id: str) -> None:
    if (proposal := ls.active((proposal_id,))) is not None:
        proposal.reject({uri: [hunk_id]})
        ls.publish()


def reject_proposal(ls: DeepacpLanguageServer, *proposal_id: str) -> dict:
    """Reject everything still pending (in the active proposal when none is named)."""
    if (proposal := ls.active(proposal_id)) is None:
        return {"rejected": 0}
    rejected = proposal.reject_all()
    ls.publish()
    return {"rejected": rejected}


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


async def show_diff(ls: DeepacpLanguageServer, proposal_id: str) -> dict:
    """The proposal as one unified diff: opened as a document where the client can open
    one, otherwise shown as a message."""
    from deepacp.config import deepacp_home
    from deepacp.diffs import unified_diff

    if (proposal := ls.active((proposal_id,))) is None:
        return {}
    folder = deepacp_home() / "proposals"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{proposal.id}.diff"
    text = "".join(
        unified_diff(ls.display_name(c.path), c.old_text, c.new_text)
        for c in proposal.files.values()
    )
    path.write_text(text, encoding="utf-8")
    if ls.support.show_document:
        shown = await ls.window_show_document_async(
            T.ShowDocumentParams(uri=path.as_uri(), take_focus=True)
        )
        if shown.success:
            return {"path": str(path), "shown": "document"}
    ls.notify_user(f"deepacp: proposal {proposal.id}\n{text}")
    return {"path": str(path), "shown": "message"}


def register(server: DeepacpLanguageServer) -> None:
    """Make these the server's commands."""
    commands: dict[str, Callable[..., Any]] = {
        review.ACCEPTED: accepted,
        review.ACCEPTED_PROPOSAL: accepted_proposal,
        review.ACCEPT_HUNK: accept_hunk,
        review.ACCEPT_FILE: accept_file,
        review.ACCEPT_PROPOSAL: accept_proposal,
        review.REJECT_HUNK: reject_hunk,
        review.REJECT_PROPOSAL: reject_proposal,
        review.REVIEW: review_in_editor,
        review.SHOW_DIFF: show_diff,
    }
    for name, handler in commands.items():
        server.command(name)(handler)
