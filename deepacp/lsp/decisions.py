"""The user's decisions on a proposal: accept (a hunk, a file, all of it), reject, review
in the editor, show the diff. The server never writes a project file: accepting asks the
editor to apply the change to its buffers, and the user saves. The hunks' states are the
proposal's (`Proposal.accept`, `Proposal.reject`); these commands are the glue."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lsprotocol import types as T

from deepacp.lsp import edits, messages, review
from deepacp.lsp.edits import Left
from deepacp.lsp.language_server import DeepacpLanguageServer
from deepacp.lsp.proposal import Proposal


def _accepted(
    ls: DeepacpLanguageServer, proposal: Proposal, covered: dict[str, list[str]], left: list[Left]
) -> dict:
    """Mark the hunks the editor applied; tell the user what it applied and what is left
    where."""
    proposal.accept(covered)
    ls.publish()
    message = messages.accept_message(proposal, sorted(covered), left, ls.display_name)
    ls.notify_user(message, T.MessageType.Warning if left else T.MessageType.Info)
    return {
        "applied": bool(covered),
        "files": sorted(covered),
        "left": [
            {
                "file": ls.display_name(proposal.files[x.uri].path),
                "line": x.line + 1,
                "reason": x.reason,
            }
            for x in left
        ],
    }


def accepted(ls: DeepacpLanguageServer, proposal_id: str, uri: str, hunk_ids: list[str]) -> None:
    if (proposal := ls.active((proposal_id,))) is not None:
        proposal.accept({uri: hunk_ids})
        ls.publish()


def accepted_proposal(
    ls: DeepacpLanguageServer, proposal_id: str, covered: dict[str, list[str]]
) -> dict:
    """After the client applied an "Accept proposal" action: the editor has sent its changes
    first, so what is left is found in the documents as they are now."""
    if (proposal := ls.active((proposal_id,))) is None:
        return {"applied": False, "reason": "no such proposal"}
    proposal.accept(covered)
    left = edits.outstanding(proposal, ls.documents_for(proposal), ls.support)
    return _accepted(ls, proposal, covered, left)


async def accept_hunk(ls: DeepacpLanguageServer, proposal_id: str, uri: str, hunk_id: str) -> dict:
    return await _accept_in_file(ls, proposal_id, uri, {hunk_id})


async def accept_file(ls: DeepacpLanguageServer, proposal_id: str, uri: str) -> dict:
    return await _accept_in_file(ls, proposal_id, uri, None)


async def _accept_in_file(
    ls: DeepacpLanguageServer, proposal_id: str, uri: str, hunk_ids: set[str] | None
) -> dict:
    proposal = ls.active((proposal_id,))
    if proposal is None or (change := proposal.files.get(uri)) is None:
        return {"applied": False, "reason": "no such proposal"}
    part = edits.file_edit(change, *ls.current(change), ls.support, hunk_ids)
    if (edit := edits.workspace_edit([part], ls.support)) is None:
        message = messages.refusal_message(part.refusal, ls.display_name(change.path))
        ls.notify_user(message, T.MessageType.Warning)
        return {"applied": False, "reason": part.refusal}
    if not await ls.apply_edit(edit, "deepacp: accept"):
        return {"applied": False, "reason": "refused by the editor"}
    proposal.accept({uri: part.covered})
    ls.publish()
    return {"applied": True, "hunks": list(part.covered)}


async def accept_proposal(ls: DeepacpLanguageServer, *proposal_id: str) -> dict:
    """Apply everything still pending (in the active proposal when none is named)."""
    if (proposal := ls.active(proposal_id)) is None:
        return {"applied": False, "reason": "no such proposal"}
    parts = edits.proposal_edits(proposal, ls.documents_for(proposal), ls.support)
    edit = edits.workspace_edit(parts, ls.support)
    if edit is not None and not await ls.apply_edit(edit, "deepacp: accept proposal"):
        return {"applied": False, "reason": "refused by the editor"}
    covered = {p.uri: list(p.covered) for p in parts if p.covered}
    # Where the rest is once the editor has applied the edit (it may not have told us yet).
    left = sorted((x for p in parts for x in p.left_after()), key=lambda x: (x.uri, x.line))
    return _accepted(ls, proposal, covered, left)


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
    """One annotated edit needing confirmation (VS Code opens its refactor preview)."""
    if (proposal := ls.active((proposal_id,))) is None:
        return {"applied": False}
    edit, covered = review.annotated_edit(proposal, ls.documents_for(proposal), ls.support)
    if edit is None:
        return {"applied": False}
    applied = await ls.apply_edit(edit, f"deepacp: {proposal.summary}")
    if applied:
        proposal.accept(covered)
        ls.publish()
    return {"applied": applied}


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
