"""Code actions that start an edit: an instruction comment (`# deepacp: make it async`)
under the cursor, and "fix this" for a problem another tool reported. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from lsprotocol import types as T

from deepacp.lsp.arguments import EDIT
from deepacp.lsp.review import SOURCE, command

INSTRUCTION = re.compile(r"(?:#|//|--|;|/\*|<!--|\*)\s*deepacp:\s*(?P<text>.+?)\s*(?:\*/|-->)?\s*$")
FIX = "deepacp: fix this"


def range_json(value: T.Range) -> dict[str, Any]:
    """A range as `deepacp.edit` takes it."""
    return {
        "start": {"line": value.start.line, "character": value.start.character},
        "end": {"line": value.end.line, "character": value.end.character},
    }


def instruction_actions(uri: str, lines: Sequence[str], selection: T.Range) -> list[T.CodeAction]:
    """An edit for each instruction comment on the selected lines."""
    actions = []
    for number in range(selection.start.line, min(selection.end.line, len(lines) - 1) + 1):
        if match := INSTRUCTION.search(lines[number]):
            line = T.Range(T.Position(number, 0), T.Position(number + 1, 0))
            args = {"uri": uri, "instruction": match["text"], "range": range_json(line)}
            title = f"deepacp: {match['text']}"
            actions.append(
                T.CodeAction(
                    title=title, kind=T.CodeActionKind.QuickFix, command=command(title, EDIT, args)
                )
            )
    return actions


def fix_actions(uri: str, diagnostics: Sequence[T.Diagnostic]) -> list[T.CodeAction]:
    """An edit fixing each problem in `diagnostics` that is not deepacp's own hint."""
    actions = []
    for diagnostic in diagnostics:
        if diagnostic.source == SOURCE:
            continue
        args = {
            "uri": uri,
            "instruction": f"Fix this problem: {diagnostic.message}",
            "range": range_json(diagnostic.range),
        }
        actions.append(
            T.CodeAction(
                title=FIX,
                kind=T.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                command=command(FIX, EDIT, args),
            )
        )
    return actions
