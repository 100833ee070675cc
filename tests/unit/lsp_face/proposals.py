"""The proposal the review and message tests show: an edited file, a created and a deleted one."""

from __future__ import annotations

from pathlib import Path

from deepacp.lsp.proposal import Proposal, make_proposal

OLD = "one\ntwo\nthree\nfour\n"
NEW = "zero\none\ntwo\nTHREE\nfour\n"
"""src/a.py before and after: an insertion at the top, a replaced line 2."""
A, N, D = "file:///w/src/a.py", "file:///w/notes.md", "file:///w/old.py"


def name(path: str) -> str:
    """`path` relative to the workspace /w, as the server names files to the user."""
    return Path(path).relative_to("/w").as_posix()


def three_files(*, deleting: bool = True) -> Proposal:
    """Proposal p1: src/a.py edited from OLD to NEW, notes.md created and (with `deleting`)
    old.py deleted."""
    files = {
        A: ("/w/src/a.py", OLD, NEW),
        N: ("/w/notes.md", None, "- x\n"),
        D: ("/w/old.py", "OLD = 1\n", None),
    }
    if not deleting:
        del files[D]
    proposal = make_proposal("p1", files)
    proposal.rationale = "Added zero and shouted three."
    return proposal
