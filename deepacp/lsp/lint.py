"""Diagnostics for the files that steer the agent: SKILL.md (the Agent Skills spec) and
AGENTS.md (no secrets: memory is sent to the model)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as T

from deepacp.harness import MEMORY_FILE, SKILL_FILE, validate_skill
from deepacp.lsp.review import SOURCE
from deepacp.secrets import looks_like_secret


def _line_of(text: str, field: str) -> int:
    for number, line in enumerate(text.splitlines()):
        if line.startswith(f"{field}:"):
            return number
    return 0


def _diagnostic(line: int, message: str, severity: T.DiagnosticSeverity) -> T.Diagnostic:
    return T.Diagnostic(
        range=T.Range(T.Position(line, 0), T.Position(line + 1, 0)),
        message=message,
        severity=severity,
        source=SOURCE,
    )


def lint(path: Path, text: str) -> list[T.Diagnostic] | None:
    """Diagnostics for a steering file, or None when `path` is not one."""
    if path.name == SKILL_FILE:
        _, problems = validate_skill(path.parent.name, text, path.name)
        out = []
        for problem in problems:
            message = problem.removeprefix(f"{path.name}: ")
            field = next(
                (f for f in ("name", "description", "compatibility", "metadata") if f in message),
                "",
            )
            severity = (
                T.DiagnosticSeverity.Warning if "ignored" in message else T.DiagnosticSeverity.Error
            )
            out.append(_diagnostic(_line_of(text, field) if field else 0, message, severity))
        return out
    if path.name == MEMORY_FILE:
        return [
            _diagnostic(
                number,
                "This looks like a secret. AGENTS.md is sent to the model: keep credentials out.",
                T.DiagnosticSeverity.Warning,
            )
            for number, line in enumerate(text.splitlines())
            if looks_like_secret(line)
        ]
    return None
