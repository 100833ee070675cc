"""A package's `__getattr__` that imports a public name's home module on first use, so
importing the package loads nothing (`deepacp --stdio` answers `initialize` before
LangChain is loaded)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def homes_of(exports: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Each exported name's home module, from the names each home exports."""
    return {name: home for home, names in exports.items() for name in names}


def lazy_names(
    package: str, homes: Mapping[str, str], namespaces: Sequence[str] = ()
) -> Callable[[str], Any]:
    """The `__getattr__` of `package`: a name of `homes` from its home module, a name of
    `namespaces` as the package's submodule."""

    def __getattr__(name: str) -> Any:
        if name in namespaces:
            return importlib.import_module(f"{package}.{name}")
        if name in homes:
            return getattr(importlib.import_module(homes[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
