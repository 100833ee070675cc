"""Two packages whose `__init__` runs when one of its names is first asked for, not on import.

LangChain's agents import `langsmith.run_trees`, which imports one `Literal` from
`langsmith.types`; that package's `__init__` defines ~150 generated pydantic models. LangGraph's
runtime imports its auth types from `langgraph_sdk`, whose `__init__` loads the SDK's HTTP
client (httpx, and the rich and click that httpx's command line takes where installed). The two
`__init__`s were a third of the CPU of the harness import, in every deepacp process, for names
a session never uses (`benchmarks/start_cost.py`).

A submodule still imports as usual (`langsmith.types.run_select_field` reads that file alone),
and the package's `__init__` runs, once, the first time a name it defines is asked for
(`from langsmith.types import Run`, `langgraph_sdk.get_client`, `dir()`); code that uses them
(`deepacp --server`, a LangGraph server hosting deepacp) sees the packages as they are. A
package imported before `install()` is left as it is.
"""

from __future__ import annotations

import importlib.machinery
import sys
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib.abc import Loader

DEFERRED = frozenset({"langsmith.types", "langgraph_sdk"})


class _DeferredInit:
    """Makes the package module with its `__path__`; its `__init__` runs on first use."""

    def __init__(self, loader: Loader) -> None:
        self.loader = loader
        self.lock = threading.RLock()
        self.ran = False

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        def __getattr__(name: str) -> Any:
            self.run_init(module, stand_ins)
            if vars(module).get("__getattr__") is __getattr__:  # asked by its own `__init__`
                raise AttributeError(
                    f"partly initialized module {module.__name__!r} has no {name!r}"
                )
            return getattr(module, name)

        def __dir__() -> list[str]:
            self.run_init(module, stand_ins)
            return (
                dir(module) if vars(module).get("__dir__") is not __dir__ else sorted(vars(module))
            )

        stand_ins = {"__getattr__": __getattr__, "__dir__": __dir__}
        vars(module).update(stand_ins)

    def run_init(self, module: ModuleType, stand_ins: dict[str, Any]) -> None:
        """The real `__init__`, once; other threads wait for it to end."""
        with self.lock:
            if self.ran:
                return
            self.ran = True
            try:
                self.loader.exec_module(module)
            finally:
                for name, stand_in in stand_ins.items():
                    if vars(module).get(name) is stand_in:
                        del vars(module)[name]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)  # resources, source: the real loader's


class DeferredInits:
    """Finds the packages `names` with their `__init__` deferred."""

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.names:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            return None  # not an installed package: the usual import says what is wrong
        spec.loader = _DeferredInit(spec.loader)  # type: ignore[assignment]
        return spec


def install() -> None:
    """Defer the two `__init__`s in this process (once; imports made already stay)."""
    if not any(isinstance(finder, DeferredInits) for finder in sys.meta_path):
        sys.meta_path.insert(0, DeferredInits(DEFERRED))
