"""The workspace edits that apply a proposal, shaped for what the client can do. Pure.

Nothing here writes a file: every change goes to the editor, which applies it to its
buffers, and the user saves. A file the agent created is a CreateFile the editor performs
where the client declares file operations in `documentChanges` (VS Code); elsewhere it is
a text edit that replaces the whole of the editor's empty document for that file (Neovim
and Emacs open an unsaved buffer for it). A deletion needs the client's DeleteFile;
without it the hunk is left for the user to do or reject.

Text edits name the document version they were made for wherever the client honours it
(`ClientSupport.versioned_edits`), so an edit that arrives after the user typed is refused
by the editor instead of landing on the wrong lines or twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from lsprotocol import types as T

from deepacp.lsp.capabilities import ClientSupport
from deepacp.lsp.proposal import FileChange, Hunk, Proposal, split_lines

Documents = dict[str, tuple[str | None, int | None]]
"""uri -> (the file's text now, its editor version); None text: the file does not exist."""

LeftReason = Literal["pending", "stale", "delete"]
Operation = Literal["edit", "create", "delete"]
Refusal = Literal["stale", "cannot delete"]


@dataclass(frozen=True)
class Left:
    """A pending hunk that an accept did not apply, where it is, and why."""

    uri: str
    line: int
    reason: LeftReason


@dataclass
class FileEdit:
    """What applying some pending hunks of one file takes."""

    uri: str
    version: int | None
    operation: Operation = "edit"
    edits: list[T.TextEdit] = field(default_factory=list)
    covered: dict[str, int] = field(default_factory=dict)
    """Hunk id -> the line it applies at."""
    left: list[Left] = field(default_factory=list)
    deltas: list[tuple[int, int]] = field(default_factory=list)
    """(line, lines added or removed) of each covered hunk."""
    after: str | None = None
    """The document's text once this edit is applied (None: the file is deleted)."""

    def left_after(self) -> list[Left]:
        """The hunks left out, at the lines they will be on once this edit is applied."""
        return [
            Left(x.uri, x.line + sum(d for at, d in self.deltas if at < x.line), x.reason)
            for x in self.left
        ]

    @property
    def empty(self) -> bool:
        return not self.edits and self.operation != "delete"

    @property
    def refusal(self) -> Refusal:
        """Why an empty edit applies nothing: a deletion the client cannot do, or the text
        under the change is not what it was."""
        return "cannot delete" if any(x.reason == "delete" for x in self.left) else "stale"


def hunk_range(at: int, hunk: Hunk) -> T.Range:
    return T.Range(T.Position(at, 0), T.Position(at + len(hunk.old_lines), 0))


def columns(text: str, encoding: str) -> int:
    """How long `text` (within one line) is in the position encoding agreed with the client."""
    if encoding == T.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    if encoding == T.PositionEncodingKind.Utf32:
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def hunk_edit(current: list[str], at: int, hunk: Hunk, encoding: str) -> T.TextEdit:
    """The edit writing `hunk` at line `at` of `current` (the document now). Lines added
    after the last line go at the end of that line — its line break, then the lines
    without their last one — because there is no line past the last in an editor's
    buffer: Neovim 0.11.4 leaves an empty line after text inserted there."""
    text = "".join(hunk.new_lines)
    if hunk.old_lines or at < len(current) or not current:
        return T.TextEdit(hunk_range(at, hunk), text)
    last = current[-1]
    end = T.Position(len(current) - 1, columns(last.rstrip("\r\n"), encoding))
    added = text.removesuffix(_line_break(hunk.new_lines[-1])) if hunk.new_lines else text
    return T.TextEdit(T.Range(end, end), (_line_break(last) or "\n") + added)


def _line_break(line: str) -> str:
    return line[len(line.rstrip("\r\n")) :]


def whole_range(text: str | None) -> T.Range:
    """All of a document; None: one the editor has not opened yet, which it opens as one
    empty line when the file does not exist (a range past the end is clamped)."""
    end = 1 if text is None else len(split_lines(text))
    if text and not text.endswith(("\n", "\r")):
        last = split_lines(text)[-1]
        return T.Range(T.Position(0, 0), T.Position(end - 1, len(last.encode("utf-16-le")) // 2))
    return T.Range(T.Position(0, 0), T.Position(end, 0))


def file_edit(
    change: FileChange,
    current: str | None,
    version: int | None,
    support: ClientSupport,
    hunk_ids: set[str] | None = None,
) -> FileEdit:
    """The edit applying the chosen pending hunks (all when `hunk_ids` is None); stale
    hunks, and deletions the client cannot do, are left out."""
    chosen = [h for h in change.pending if hunk_ids is None or h.id in hunk_ids]
    out = FileEdit(change.uri, version)
    if not chosen:  # nothing pending there (decided, or being applied): nothing to send
        out.after = current
        return out
    if change.deleted:
        if support.document_changes and support.delete_files:
            out.operation = "delete"
        if out.operation == "delete" or current is None:  # None: it is gone already
            out.covered = {h.id: 0 for h in chosen}
        else:
            out.left = [Left(change.uri, 0, "delete") for _ in chosen]
            out.after = current
        return out
    if change.created and current is None:
        creates = support.document_changes and support.create_files
        out.operation = "create" if creates else "edit"
        where = T.Range(T.Position(0, 0), T.Position(0, 0)) if creates else whole_range(None)
        out.edits = [T.TextEdit(where, change.new_text or "")]
        out.covered = {h.id: 0 for h in chosen}
        out.after = change.new_text or ""
        return out
    lines = split_lines(current)
    for place in change.placed(current):
        hunk, at = place.hunk, place.line
        if hunk_ids is not None and hunk.id not in hunk_ids:
            continue
        if place.stale:
            out.left.append(Left(change.uri, at, "stale"))
            continue
        if change.created:
            out.edits.append(T.TextEdit(whole_range(current), "".join(hunk.new_lines)))
        else:
            out.edits.append(hunk_edit(lines, at, hunk, support.position_encoding))
        out.covered[hunk.id] = at
        out.deltas.append((at, hunk.delta))
    if change.created and out.covered:
        lines = split_lines(change.new_text)
    else:  # from the bottom up, so each hunk's line is still where it was
        applied = [h for h in chosen if h.id in out.covered]
        for hunk in sorted(applied, key=lambda h: out.covered[h.id], reverse=True):
            start = out.covered[hunk.id]
            lines[start : start + len(hunk.old_lines)] = hunk.new_lines
    out.after = "".join(lines)
    return out


def proposal_edits(
    proposal: Proposal, documents: Documents, support: ClientSupport
) -> list[FileEdit]:
    """A file edit for every file with pending hunks."""
    return [
        file_edit(change, *documents.get(uri, (None, None)), support)
        for uri, change in proposal.files.items()
        if change.pending
    ]


def workspace_edit(
    parts: list[FileEdit],
    support: ClientSupport,
    annotation: tuple[str, T.ChangeAnnotation] | None = None,
) -> T.WorkspaceEdit | None:
    """One WorkspaceEdit for the parts (None when there is nothing to apply): versioned
    `documentChanges` where the client honours them, else plain `changes`; annotated edits
    when given an annotation (they then need the user's confirmation). File operations
    only come from `file_edit` for a client that declares them."""
    parts = [p for p in parts if not p.empty]
    if not parts:
        return None
    if not support.versioned_edits:
        return T.WorkspaceEdit(changes={p.uri: p.edits for p in parts})
    annotation = annotation if support.annotations else None
    label = annotation[0] if annotation else None
    changes: list = []
    for part in parts:
        if part.operation == "delete":
            options = T.DeleteFileOptions(ignore_if_not_exists=True)
            changes.append(T.DeleteFile(uri=part.uri, options=options, annotation_id=label))
            continue
        if part.operation == "create":
            changes.append(T.CreateFile(uri=part.uri, annotation_id=label))
        edits = (
            [
                T.AnnotatedTextEdit(range=e.range, new_text=e.new_text, annotation_id=label)
                for e in part.edits
            ]
            if label
            else part.edits
        )
        identifier = T.OptionalVersionedTextDocumentIdentifier(uri=part.uri, version=part.version)
        changes.append(T.TextDocumentEdit(identifier, edits))
    return T.WorkspaceEdit(
        document_changes=changes,
        change_annotations=dict([annotation]) if annotation else None,
    )


def outstanding(proposal: Proposal, documents: Documents, support: ClientSupport) -> list[Left]:
    """Every pending hunk of the proposal, where it is and whether accepting would apply it."""
    out: list[Left] = []
    for part in proposal_edits(proposal, documents, support):
        out += [Left(part.uri, at, "pending") for at in part.covered.values()]
        out += part.left
    return sorted(out, key=lambda left: (left.uri, left.line))
