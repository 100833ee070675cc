"""The user's decisions on a proposal: accept (a hunk, a file, all of it: `accepting.py`),
reject, review in the editor, show the diff. The server never writes a project file:
accepting asks the editor to apply the change to its buffers, and the user saves. The
hunks' states are the proposal's (`Proposal.accept`, `Proposal.reject`, claimed and settled
through `applying.py`); these commands are the glue. A code action carries its edit, and
its bookkeeping command here counts it only once the editor's text shows it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lsprotocol import types as T

from deepacp.lsp import accepting, edits, messages, review
from deepacp.lsp.accepting import report
from deepacp.lsp.applying import Application, digest
from deepacp.lsp.language_server import DeepacpLanguageServer
from deepacp.lsp.proposal import FileChange, Proposal, split_lines


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
    return report(ls, proposal, sorted(accepted_now), not_applied, list(proposal.files))


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
        report(ls, proposal, sorted(accepted_now), not_applied, list(proposal.files))
        return
    ls.publish()
    if not_applied:
        uri = not_applied[0][0]
        message = messages.unapplied_message(proposal, uri, ls.display_name)
        ls.notify_user(message, T.MessageType.Warning)


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


async def show_diff(ls: DeepacpLanguageServer, proposal_id: str) -> dict:
    """The proposal as one unified diff: opened as a document where the client can open
    one, otherwise shown as a message."""
    from deepacp.config import deepacp_home
    from deepacp.diffs import unified_diff
    from deepacp.private import private_dir

    if (proposal := ls.active((proposal_id,))) is None:
        return {}
    folder = deepacp_home() / "proposals"
    private_dir(folder)
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
        review.ACCEPT_HUNK: accepting.accept_hunk,
        review.ACCEPT_FILE: accepting.accept_file,
        review.ACCEPT_PROPOSAL: accepting.accept_proposal,
        review.REJECT_HUNK: reject_hunk,
        review.REJECT_PROPOSAL: reject_proposal,
        review.REVIEW: accepting.review_in_editor,
        review.SHOW_DIFF: show_diff,
    }
    for name, handler in commands.items():
        server.command(name)(handler)
