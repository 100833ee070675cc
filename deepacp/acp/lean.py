"""Cheaper pydantic models for the server process.

Most of the time between `initialize` and the first answer was pydantic defining the ACP
schema's ~280 models, most of which this process never uses. Two changes, only while the
schema is imported:

- each of its models builds its validator and serializer on first use (`defer_build`),
  not when its class is defined;
- the ACP schema's field docstrings are not read from its source (they only become field
  descriptions in a JSON schema, and nothing here makes one of the protocol's models).
  The descriptions of a tool's arguments, which the model reads, are left alone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def _deferred_model_builds() -> Iterator[None]:
    """Models defined meanwhile build their validators when first used (the others, such
    as LangChain's, as usual: a broken one fails at import, not at first use)."""
    import pydantic

    config = pydantic.BaseModel.model_config
    before = config.get("defer_build")
    config["defer_build"] = True
    try:
        yield
    finally:
        if before is None:
            config.pop("defer_build", None)
        else:
            config["defer_build"] = before


@contextlib.contextmanager
def _without_field_docstrings() -> Iterator[None]:
    try:
        from pydantic._internal import _fields
    except ImportError:  # another pydantic: read them, as usual
        yield
        return
    original = getattr(_fields, "_update_fields_from_docstrings", None)
    if original is None:
        yield
        return

    def skip(*_: Any, **__: Any) -> None:
        return None

    _fields._update_fields_from_docstrings = skip
    try:
        yield
    finally:
        _fields._update_fields_from_docstrings = original


def import_acp_schema() -> None:
    """Import the ACP SDK's schema the cheap way; call it before any other thread defines
    pydantic models (the docstring reader is switched off process-wide meanwhile)."""
    with _deferred_model_builds(), _without_field_docstrings():
        import acp.schema  # noqa: F401
