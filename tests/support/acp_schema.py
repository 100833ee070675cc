"""The newest ACP v1 JSON schema (1.25, from the TypeScript SDK's npm package, pinned by
hash), and a check of one JSON-RPC message against it by method and direction.

The schema is not kept in the repository: the first use downloads the package from the npm
registry (plain HTTPS, no node needed), checks its sha512, and keeps the two schema files
in a per-user cache, written atomically so parallel workers never read half a file.
Stable methods are checked against `schema.json`, methods only the unstable schema has
against `schema.unstable.json` (or every method, with `unstable=True`, for a client that
declared an unstable capability); `_`-prefixed extension methods are in neither and are
not checked.
"""

from __future__ import annotations

import base64
import fcntl
import functools
import hashlib
import io
import json
import os
import tarfile
import tempfile
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import jsonschema
import pytest

SDK_VERSION = "2.4.0"
TARBALL = f"https://registry.npmjs.org/@agentclientprotocol/sdk/-/sdk-{SDK_VERSION}.tgz"
INTEGRITY = (
    "sha512-7qJ8nnyj7WesC5ve185ioTpB2/svQoeGV4HA4nLEhgDUrcmBe54/08VcXc/oL4p14tDbxxECZzdYmUYQ"
    "+4l+Wg=="
)
FILES = {
    "stable": "package/schema/v1/schema.json",
    "unstable": "package/schema/v1/schema.unstable.json",
}
CACHE = (
    Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "deepacp-tests"
    / f"acp-sdk-{SDK_VERSION}"
)
"""Resolved at import, before any test points HOME elsewhere."""

Sender = Literal["agent", "client"]


class SchemaViolation(AssertionError):
    """A message the 1.25 schema does not allow; says where and why in one line."""


def _download() -> bytes:
    with urllib.request.urlopen(TARBALL, timeout=30) as response:
        data: bytes = response.read()
    digest = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    if digest != INTEGRITY:
        raise RuntimeError(f"{TARBALL} has {digest}, not the pinned {INTEGRITY}")
    return data


def _write_atomically(path: Path, data: bytes) -> None:
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as file:
        file.write(data)
    os.replace(temporary, path)


def _fill_cache() -> None:
    """Download the package once (a lock keeps parallel workers from all fetching it)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all((CACHE / Path(member).name).exists() for member in FILES.values()):
            return
        with tarfile.open(fileobj=io.BytesIO(_download()), mode="r:gz") as archive:
            for member in FILES.values():
                extracted = archive.extractfile(member)
                assert extracted is not None, f"{member} is not a file in {TARBALL}"
                _write_atomically(CACHE / Path(member).name, extracted.read())


@dataclass(frozen=True)
class Schema:
    """One schema file: its definitions and which definition each method's messages take."""

    document: dict[str, Any]
    messages: dict[tuple[str, str, str], str]
    """(method, side handling it, "request" | "response") -> definition name."""
    validators: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> Schema:
        document = json.loads(path.read_text())
        messages: dict[tuple[str, str, str], str] = {}
        for name, definition in document["$defs"].items():
            if "x-method" in definition:
                shape = "response" if name.endswith("Response") else "request"
                messages[definition["x-method"], definition["x-side"], shape] = name
        return cls(document, messages)

    def check(self, name: str, instance: Any, where: str) -> None:
        validator = self.validators.get(name)
        if validator is None:
            schema = {"$ref": f"#/$defs/{name}", "$defs": self.document["$defs"]}
            validator = self.validators[name] = jsonschema.Draft202012Validator(schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
        if error is not None:
            path = "/".join(str(p) for p in error.absolute_path) or "(top)"
            raise SchemaViolation(f"{where}: {name} at {path}: {error.message}")


@functools.cache
def schemas() -> dict[str, Schema] | str:
    """The stable and unstable schemas, or why they cannot be had here."""
    try:
        _fill_cache()
    except (OSError, RuntimeError, tarfile.TarError) as error:
        return f"the ACP {SDK_VERSION} schema could not be fetched from npm: {error}"
    return {kind: Schema.load(CACHE / Path(member).name) for kind, member in FILES.items()}


def require() -> dict[str, Schema]:
    """The schemas, or the test skips saying why they are not here."""
    loaded = schemas()
    if isinstance(loaded, str):
        pytest.skip(loaded)
    return loaded


def check(
    message: dict[str, Any],
    *,
    sender: Sender = "agent",
    method: str | None = None,
    unstable: bool = False,
) -> None:
    """Check a JSON-RPC `message` that `sender` wrote (`method`: for a response, the
    method of the request it answers) against the 1.25 schema; raises SchemaViolation."""
    loaded = require()
    receiver: Sender = "client" if sender == "agent" else "agent"
    if "error" in message:
        loaded["stable"].check("Error", message["error"], f"error answering {method}")
        return
    if "method" in message:
        method, handler, shape, body = message["method"], receiver, "request", "params"
    else:
        handler, shape, body = sender, "response", "result"
    if method is None or method.startswith("_"):
        return  # extension methods are not in the schema
    kinds = ("unstable",) if unstable else ("stable", "unstable")
    for kind in kinds:
        name = loaded[kind].messages.get((method, handler, shape))
        if name is not None:
            loaded[kind].check(name, message.get(body), f"{method} {shape} from the {sender}")
            return
    raise SchemaViolation(f"{method}: no {shape} from the {sender} in the ACP 1.25 schema")
