"""The package's layers: faces (ACP, LSP, headless) over the session runtime, over the
harness, over the backends. A lower layer never imports a higher one, lazily or not; the
layers above the session and the harness import only their public names; a face never
imports another face."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest

import deepacp

PACKAGE = Path(deepacp.__file__).parent
FACES = (
    "deepacp.acp",
    "deepacp.lsp",
    "deepacp.headless",
    "deepacp.cli",
    "deepacp.demo",
    "deepacp.doctor",
)
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


PUBLIC = {"session": FACES, "harness": (*FACES, "deepacp.session")}
"""A layer whose package is its public API (`__all__`), and who imports it from above."""
ENTRY = "deepacp.cli"
"""The command line starts each face; no other face imports another."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules_of(layers: tuple[str, ...]) -> list[Path]:
    every = sorted(PACKAGE.rglob("*.py"))
    return [path for path in every if reaches(module_name(path), layers)]


def named_imports(path: Path) -> Iterator[tuple[int, str, str | None]]:
    """(line, module, name) for each deepacp import in `path`; name None for `import m`."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, None
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                yield node.lineno, node.module, alias.name


def private_imports(path: Path, layer: str, public: set[str]) -> list[str]:
    package = f"deepacp.{layer}"
    wrong = []
    for line, module, name in sorted(named_imports(path), key=lambda found: found[0]):
        shown = f"{PACKAGE.name}/{path.relative_to(PACKAGE)}:{line}"
        if module == package and name is not None and name not in public:
            wrong.append(f"{shown} imports {module}.{name}, not in {package}.__all__")
        elif module.startswith(f"{package}."):
            what = f"{module}.{name}" if name else module
            wrong.append(f"{shown} imports {what}; import it from {package}")
    return wrong


@pytest.mark.parametrize("layer", sorted(PUBLIC))
def test_the_layers_above_import_only_the_public_names(layer: str) -> None:
    public = set(getattr(importlib.import_module(f"deepacp.{layer}"), "__all__", ()))
    users = modules_of(PUBLIC[layer])
    assert users  # the layers above are really read
    wrong = [line for path in users for line in private_imports(path, layer, public)]
    assert not wrong, "\n".join(wrong)


def test_a_face_imports_no_other_face() -> None:
    faces = tuple(face for face in FACES if face != ENTRY)
    wrong = [
        f"{PACKAGE.name}/{path.relative_to(PACKAGE)}:{line} imports {module}"
        for face in faces
        for path in modules_of((face,))
        for line, module, _ in named_imports(path)
        if reaches(module, tuple(other for other in faces if other != face))
    ]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("layer", sorted(PUBLIC))
def test_every_public_name_is_there(layer: str) -> None:
    package = importlib.import_module(f"deepacp.{layer}")
    missing = [name for name in package.__all__ if not hasattr(package, name)]
    assert not missing, f"deepacp.{layer}.__all__ names what it cannot give: {missing}"
