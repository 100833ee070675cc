"""The suite's tiers: markers by folder, the per-test timeout, and which tests share a daemon.

- tests/e2e/ is marked `e2e`: a process of its own, most often the real `deepacp` binary
  (also fresh Pythons probing imports, the `deepacp sandbox` launcher, the docs build).
- tests/services/ is marked `services`: a real PostgreSQL, sshd, dockerd, `langgraph dev`
  or bubblewrap sandbox.
- Every other folder runs in the test's process; `pytest -m "not e2e and not services"` is
  the fast tier.

A test process that will serve ACP in-process does the server's imports once, before its
first test, outside any test's time (`inprocess.warm_imports`).

Every test gets pyproject's `timeout` (30 s) to catch a hang; a test marked
`slow(reason=...)` gets SLOW_SECONDS (or its own `timeout` marker) and must say why; a test
using a fixture of SLOW_FIXTURES is marked so. Under pytest-xdist the tests of one daemon
run on one worker, so the run starts it once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
FOLDER_MARKERS = {"e2e": "e2e", "services": "services"}
IN_PROCESS = {"inprocess", "providers"}
"""Folders whose tests serve ACP in the test's process without `agent_factory`."""
SLOW_SECONDS = 300
DAEMONS = {
    "docker_box": "docker",
    "postgres_server": "postgres",
    "postgres_url": "postgres",
    "ssh_server": "sshd",
    "langgraph_server": "langgraph",
    "llama_server": "llama",
    "llama_small_server": "llama",
}
"""Session fixture -> the xdist group of the tests that use it."""
SLOW_FIXTURES = {
    "langgraph_server": "starts `langgraph dev`, which may take a minute to answer under load",
    "llama_server": "a real model on 2 CPU cores reads deepacp's prompt for up to a minute",
    "llama_small_server": "a real model on 2 CPU cores reads deepacp's prompt for up to a minute",
}
"""Fixture -> why every test that uses it is `slow`."""


def pytest_addoption(parser: pytest.Parser) -> None:
    # pytest-lsp's option, which its fixtures read: its plugin is not loaded by default (it
    # imports lsprotocol, a second of every start); the folders that drive `deepacp lsp`
    # register its hooks in their conftest.py.
    parser.addoption("--lsp-devtools", dest="devtools", nargs="?", default=None)


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly:
        return  # nothing runs: nothing to warm
    if any(_serves_in_process(item) for item in session.items):
        from tests.support.inprocess import warm_imports

        warm_imports()


def _serves_in_process(item: pytest.Item) -> bool:
    if item.get_closest_marker("e2e") is not None:
        return False
    path = Path(item.path)
    folder = path.relative_to(TESTS).parts[0] if path.is_relative_to(TESTS) else ""
    return folder in IN_PROCESS or "agent_factory" in getattr(item, "fixturenames", ())


def _timeout(item: pytest.Item) -> float | None:
    marker = item.get_closest_marker("timeout")
    if marker is None:
        return None
    return float(marker.args[0] if marker.args else marker.kwargs["timeout"])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    default = float(config.getini("timeout") or 0)
    for item in items:
        path = Path(item.path)
        if path.is_relative_to(TESTS) and (
            name := FOLDER_MARKERS.get(path.relative_to(TESTS).parts[0])
        ):
            item.add_marker(name)
        fixtures = getattr(item, "fixturenames", ())
        for fixture in fixtures:
            if fixture in SLOW_FIXTURES and item.get_closest_marker("slow") is None:
                item.add_marker(pytest.mark.slow(reason=SLOW_FIXTURES[fixture]))
        slow, seconds = item.get_closest_marker("slow"), _timeout(item)
        if slow is not None and not slow.kwargs.get("reason"):
            raise pytest.UsageError(f"{item.nodeid}: say why it is slow: slow(reason=...)")
        if slow is None and seconds is not None and seconds > default:
            raise pytest.UsageError(
                f"{item.nodeid}: a timeout over {default:g} s needs slow(reason=...)"
            )
        if slow is not None and seconds is None:
            item.add_marker(pytest.mark.timeout(SLOW_SECONDS))
        group = next((DAEMONS[f] for f in fixtures if f in DAEMONS), None)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))
