"""The package's layers: faces (ACP, LSP, headless) over the session runtime, over the
harness, over the backends. A lower layer never imports a higher one, lazily or not."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import deepacp

PACKAGE = Path(deepacp.__file__).parent
FACES = ("deepacp.acp", "deepacp.lsp", "deepacp.headless", "deepacp.cli", "deepacp.demo")
ABOVE = {
    "session": FACES,
    "harness": (*FACES, "deepacp.session"),
    "backends": (*FACES, "deepacp.session", "deepacp.harness"),
}


def imports_of(path: Path) -> set[str]:
    """Every deepacp module `path` names in an import, wherever in the file it is."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return {name for name in found if name.startswith("deepacp.")}


def reaches(name: str, layers: tuple[str, ...]) -> bool:
    return any(name == layer or name.startswith(f"{layer}.") for layer in layers)


@pytest.mark.parametrize("layer", sorted(ABOVE))
def test_a_layer_imports_nothing_above_it(layer: str) -> None:
    modules = sorted((PACKAGE / layer).rglob("*.py"))
    assert modules  # the layer is really read
    wrong = [
        f"{path.relative_to(PACKAGE)} imports {name}"
        for path in modules
        for name in sorted(imports_of(path))
        if reaches(name, ABOVE[layer])
    ]
    assert not wrong, "\n".join(wrong)
