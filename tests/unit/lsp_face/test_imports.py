"""The import graph of `deepacp/lsp/`: no cycle among its modules, counting every import
(lazy ones inside functions and TYPE_CHECKING ones too), and the runner does not reach
back into the server that starts it."""

from __future__ import annotations

from pathlib import Path

import deepacp.lsp
from tests.unit.test_layers import imports_of

PACKAGE = Path(deepacp.lsp.__file__).parent
SERVER_SIDE = {
    "deepacp.lsp.server",
    "deepacp.lsp.language_server",
    "deepacp.lsp.decisions",
    "deepacp.lsp.accepting",
}


def lsp_graph() -> dict[str, set[str]]:
    modules = {f"deepacp.lsp.{p.stem}": p for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    return {name: imports_of(path) & set(modules) for name, path in modules.items()}


def a_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle in `graph`, as the modules along it, or None."""
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> list[str] | None:
        if name in path:
            return [*path[path.index(name) :], name]
        if name in done:
            return None
        for imported in sorted(graph[name]):
            if cycle := visit(imported, [*path, name]):
                return cycle
        done.add(name)
        return None

    return next((c for name in sorted(graph) if (c := visit(name, []))), None)


def test_the_lsp_modules_import_each_other_without_a_cycle() -> None:
    graph = lsp_graph()
    assert "deepacp.lsp.runner" in graph["deepacp.lsp.server"]  # the graph is really read
    cycle = a_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_a_cycle_is_found_where_there_is_one() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert a_cycle(graph) == ["a", "b", "c", "a"]
    assert a_cycle({"a": {"b"}, "b": set()}) is None


def test_the_lsp_face_does_not_import_the_acp_face() -> None:
    for path in PACKAGE.glob("*.py"):
        assert not [m for m in imports_of(path) if m.startswith("deepacp.acp")], path.name
