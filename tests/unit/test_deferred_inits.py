"""A package whose `__init__` is deferred (deepacp/deferred_inits.py): a submodule imports
without it, the first name asked for runs it once, and whoever uses the package sees it
whole. Tried on a package made for the test here; on the two real ones in a fresh process
in tests/e2e/test_fresh_process.py."""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from deepacp.deferred_inits import DeferredInits

INIT = """
import builtins, time
builtins.RUNS.append("init")
time.sleep(builtins.DELAY)
from .small import SMALL
from . import heavy
BIG = heavy.BIG
"""


@pytest.fixture
def package(tmp_path: Path) -> Iterator[str]:
    """`deferred_pkg`: an `__init__` that counts its runs in `builtins.RUNS` and takes a
    while; `small` and `heavy` submodules."""
    import builtins

    name = "deferred_pkg"
    folder = tmp_path / name
    folder.mkdir()
    (folder / "__init__.py").write_text(INIT)
    (folder / "small.py").write_text("SMALL = 'small'\n")
    (folder / "heavy.py").write_text("BIG = 'big'\n")
    builtins.RUNS = []  # type: ignore[attr-defined]
    builtins.DELAY = 0.0  # type: ignore[attr-defined]
    finder = DeferredInits(frozenset({name}))
    sys.path.insert(0, str(tmp_path))
    sys.meta_path.insert(0, finder)
    try:
        yield name
    finally:
        sys.meta_path.remove(finder)
        sys.path.remove(str(tmp_path))
        for module in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
            del sys.modules[module]
        del builtins.RUNS, builtins.DELAY  # type: ignore[attr-defined]


def runs() -> list[str]:
    import builtins

    return builtins.RUNS  # type: ignore[attr-defined]


def test_a_submodule_imports_without_the_package_init(package: str) -> None:
    small = importlib.import_module(f"{package}.small")
    assert small.SMALL == "small"
    assert runs() == []
    assert f"{package}.heavy" not in sys.modules


def test_the_first_name_asked_for_runs_the_init_once(package: str) -> None:
    importlib.import_module(f"{package}.small")
    module = sys.modules[package]
    assert module.BIG == "big" and module.SMALL == "small"
    assert f"{package}.heavy" in sys.modules
    from deferred_pkg import BIG  # type: ignore[import-not-found]

    assert BIG == "big" and "BIG" in dir(module)
    assert runs() == ["init"]
    with pytest.raises(AttributeError, match="no attribute 'MISSING'"):
        _ = module.MISSING
    assert runs() == ["init"]


def test_dir_runs_the_init(package: str) -> None:
    module = importlib.import_module(package)
    assert {"BIG", "SMALL", "heavy", "small"} <= set(dir(module))
    assert runs() == ["init"]


def test_threads_asking_at_once_see_the_package_whole(package: str) -> None:
    """A name asked for while another thread runs the `__init__` waits for it to end."""
    import builtins

    builtins.DELAY = 0.2  # type: ignore[attr-defined]
    module = importlib.import_module(package)
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(module.BIG)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == ["big"] * 4
    assert runs() == ["init"]


def test_an_init_that_fails_fails_where_its_name_is_asked_for(package: str, tmp_path: Path):
    (tmp_path / package / "heavy.py").write_text("raise RuntimeError('broken package')\n")
    module = importlib.import_module(package)
    with pytest.raises(RuntimeError, match="broken package"):
        _ = module.BIG
    with pytest.raises(AttributeError):  # as after any failed import: not run again
        _ = module.BIG
    assert runs() == ["init"]
