"""How a project says its work is checked: the test commands deepacp can tell from its files.

Found at the workspace root: `pytest` (pytest.ini or conftest.py, `[tool.pytest` in
pyproject.toml, `[tool:pytest]` in setup.cfg, `[pytest]` in tox.ini), `npm test` (a
package.json with a test script other than npm's placeholder), `cargo test` (Cargo.toml),
`go test ./...` (go.mod), `make test` (a Makefile with a `test:` target), and whichever of
those AGENTS.md names.
"""

from __future__ import annotations

import json
import re

from deepacp.backends.errors import BackendError
from deepacp.backends.protocol import Backend
from deepacp.harness.names import MEMORY_FILE

PYTEST, NPM, CARGO, GO, MAKE = "pytest", "npm test", "cargo test", "go test ./...", "make test"
MARKERS: dict[str, tuple[tuple[str, str | None], ...]] = {
    PYTEST: (
        ("pytest.ini", None),
        ("conftest.py", None),
        ("pyproject.toml", "[tool.pytest"),
        ("setup.cfg", "[tool:pytest]"),
        ("tox.ini", "[pytest]"),
    ),
    CARGO: (("Cargo.toml", None),),
    GO: (("go.mod", None),),
    MAKE: (("Makefile", "\ntest:"), ("makefile", "\ntest:"), ("GNUmakefile", "\ntest:")),
}
NAMED_IN_MEMORY = {
    PYTEST: re.compile(r"\bpytest\b"),
    NPM: re.compile(r"\bnpm (run )?test\b"),
    CARGO: re.compile(r"\bcargo test\b"),
    GO: re.compile(r"\bgo test\b"),
    MAKE: re.compile(r"\bmake test\b"),
}
NPM_PLACEHOLDER = "no test specified"
MAX_READ = 200_000


async def _read(backend: Backend, path: str) -> str | None:
    try:
        text = await backend.read_text(path)
    except (BackendError, OSError, UnicodeDecodeError):
        return None
    return text[:MAX_READ]


async def project_checks(backend: Backend) -> list[str]:
    """The check commands the workspace's files point to, in a stable order."""
    try:
        names = {entry.path.rstrip("/").rsplit("/", 1)[-1] for entry in await backend.ls("")}
    except (BackendError, OSError):
        return []
    found: list[str] = []
    for command, markers in MARKERS.items():
        for name, needle in markers:
            if name in names and (
                needle is None or needle in "\n" + (await _read(backend, name) or "")
            ):
                found.append(command)
                break
    if "package.json" in names:
        try:
            scripts = json.loads(await _read(backend, "package.json") or "{}").get("scripts") or {}
        except (ValueError, AttributeError, RecursionError):  # RecursionError: nested too deep
            scripts = {}
        test = scripts.get("test") if isinstance(scripts, dict) else None
        if isinstance(test, str) and NPM_PLACEHOLDER not in test:
            found.append(NPM)
    if MEMORY_FILE in names and (memory := await _read(backend, MEMORY_FILE)):
        found += [
            c for c, named in NAMED_IN_MEMORY.items() if c not in found and named.search(memory)
        ]
    return found
