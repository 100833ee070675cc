"""What the server tells the user in words: what an edit request came to, what an accept
put into the editor and what is left where, and why a change was refused."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from deepacp.lsp.edits import Left, Refusal
from deepacp.lsp.proposal import Proposal

STALE = "the text under it changed since it was proposed"

Name = Callable[[str], str]
"""The name to show for a file (by absolute path): workspace-relative where it can be."""


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _file_names(proposal: Proposal, uris: list[str], name: Name) -> str:
    def shown(uri: str) -> str:
        change = proposal.files[uri]
        extra = " (new)" if change.created else " (deleted)" if change.deleted else ""
        return name(change.path) + extra

    return ", ".join(shown(uri) for uri in uris)


def outcome_message(proposal: Proposal, name: Name, others: Sequence[Proposal] = ()) -> str:
    """What an edit request came to, in one message; `others`: the proposals still open
    beside it (each keeps its hints and actions), named so none goes unnoticed."""
    return _outcome(proposal, name) + _also_open(proposal, others, name)


def _outcome(proposal: Proposal, name: Name) -> str:
    hunks = proposal.hunk_count
    said = f": {proposal.summary}" if proposal.rationale.strip() else ""
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


def _also_open(proposal: Proposal, others: Sequence[Proposal], name: Name) -> str:
    still = [p for p in others if p is not proposal and p.open]
    if not still:
        return ""
    shown = "; ".join(f"{p.label} in {_file_names(p, list(p.files), name)}" for p in still)
    return f" (also still open: {shown})"


def _where(left: Left, proposal: Proposal, name: Name) -> str:
    change = proposal.files[left.uri]
    if left.reason == "delete":
        return f"{name(change.path)} (to delete: this editor cannot delete files for deepacp)"
    place = f"{name(change.path)} line {left.line + 1}"
    return f"{place} (stale: {STALE})" if left.reason == "stale" else place


def accept_message(
    proposal: Proposal,
    accepted: list[str],
    left: list[Left],
    name: Name,
    not_applied: Sequence[tuple[str, str]] = (),
) -> str:
    """What an accept put into the editor (nothing is saved until the user saves), what
    the editor did not apply and why (uri, reason), and, when something is still pending,
    what and where."""
    if not accepted and not left and not not_applied:
        return "deepacp: nothing left to accept in this proposal"
    if accepted:
        files = _file_names(proposal, accepted, name)
        message = f"deepacp: accepted into the editor, not saved yet: {files}"
    else:
        message = "deepacp: nothing accepted"
    if not_applied:
        refused = "; ".join(f"{_file_names(proposal, [u], name)} ({why})" for u, why in not_applied)
        message += f"; the editor did not apply {refused}"
    if left:
        message += f"; still pending: {'; '.join(_where(x, proposal, name) for x in left)}"
    return message


def busy_message(proposal: Proposal, uris: list[str], name: Name) -> str:
    """An accept of hunks whose edit is on its way to the editor: nothing is sent twice."""
    return (
        f"deepacp: already being applied: {_file_names(proposal, uris, name)} "
        "(waiting for the editor); nothing sent again"
    )


def unapplied_message(proposal: Proposal, uri: str, name: Name) -> str:
    """A code action's change that the editor's text does not show."""
    return (
        f"deepacp: the editor did not apply the change to {_file_names(proposal, [uri], name)}; "
        "it is still pending"
    )


def refusal_message(reason: Refusal, file: str) -> str:
    """Why accepting a change in `file` (its name as shown) applied nothing."""
    if reason == "cannot delete":
        return (
            f"deepacp: this editor cannot delete files for deepacp; delete {file} yourself, "
            "or reject the change"
        )
    return "deepacp: the text under that change was edited since; refused (stale)"
