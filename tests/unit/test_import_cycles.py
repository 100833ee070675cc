"""No two modules of the package import each other, directly or round a longer loop.

Every import counts: at the top of a module, inside a function (a lazy import), and under
`TYPE_CHECKING`. A type-only import does not fail at run time, but it still ties the two
modules together (neither can be read, moved or tested without the other); where a lower
module needs a type of a higher one, it declares the Protocol it needs instead, as
`backends/proposal_shell.py` does for the overlay it writes to.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import deepacp

PACKAGE = Path(deepacp.__file__).parent

KNOWN_CIRCLES: set[frozenset[str]] = set()
"""Circles still to be undone, each named by its issue. Remove an entry when it is gone."""


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported(name: str, path: Path, known: set[str]) -> Iterator[str]:
    """The package's modules that module `name` (at `path`) imports, wherever the import is;
    `from a import b` names the module `a.b` when there is one, else `a`."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: counted from this module's package
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in known:  # `import a.b.c` of a package's name
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


def import_graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: set(imported(name, path, known)) for name, path in found.items()}


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(frozenset(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def loop(graph: dict[str, set[str]], group: frozenset[str]) -> str:
    """One loop through `group`, as `a -> b -> a`, to say where to look."""
    start = min(group)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph[node] & group):
            if nxt == start:
                return " -> ".join([*paths[node], start])
            if nxt not in paths:
                paths[nxt] = [*paths[node], nxt]
                queue.append(nxt)
    raise AssertionError(f"no loop in {sorted(group)}")


def test_the_graph_is_read_whole() -> None:
    graph = import_graph()
    assert "deepacp.cli" in graph["deepacp.__main__"]
    # a lazy import and a `from package import submodule` are both followed
    assert "deepacp.acp.server" in graph["deepacp.cli"]
    assert "deepacp.backends.search" in graph["deepacp.backends.overlay"]


def test_no_module_imports_itself_round_a_loop() -> None:
    graph = import_graph()
    found = circles(graph)
    new = [
        f"{loop(graph, group)} (the circle: {', '.join(sorted(group))})"
        for group in found
        if group not in KNOWN_CIRCLES
    ]
    assert not new, "import circles:\n" + "\n".join(new)
    gone = [sorted(group) for group in KNOWN_CIRCLES if group not in found]
    assert not gone, f"no longer circles, remove them from KNOWN_CIRCLES: {gone}"
