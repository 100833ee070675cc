"""`deepacp setup`: choose the model provider and store its API key, in a terminal.

This is deepacp's terminal authentication: an ACP client runs it (`deepacp setup`, or
the editor's own command line with `setup` appended) when the user signs in. The key is
read without echo and never printed; it goes to the OS keyring where one is usable, else
to a file only the user can read (`deepacp.credentials`). When no model is configured
yet, the provider's default model is written to config.toml.
"""

from __future__ import annotations

import getpass
import json
import os
import sys
from typing import TextIO

from deepacp.config import deepacp_home
from deepacp.credentials import forget_keys, store_key
from deepacp.errors import ConfigError, ModelConfigError
from deepacp.models import PROVIDERS, check_provider, configured_spec, split_spec
from deepacp.private import private_dir


def _keyed_providers() -> dict[str, str]:
    """Provider name -> its key variable, for the providers that need a key."""
    return {name: info.key_env for name, info in PROVIDERS.items() if info.key_env}


def _configured(model: str | None) -> str | None:
    try:
        return configured_spec(model)
    except ModelConfigError:
        return None


def _choose_provider(default: str, read: TextIO, out: TextIO) -> str | None:
    choices = list(_keyed_providers())
    listed = ", ".join(f"{i} {name}" for i, name in enumerate(choices, start=1))
    while True:
        out.write(f"Provider: {listed} [{default}]: ")
        out.flush()
        line = read.readline()
        if not line:
            return None
        answer = line.strip().lower() or default
        if answer.isdigit() and 1 <= int(answer) <= len(choices):
            return choices[int(answer) - 1]
        if answer in choices:
            return answer
        out.write(f"Unknown provider {answer!r}; type one of the names or numbers.\n")


def _read_key(prompt: str, read: TextIO, out: TextIO) -> str:
    """The key, typed without echo on a terminal (or one line from a pipe)."""
    if read.isatty():
        return getpass.getpass(prompt).strip()
    out.write(prompt)
    out.flush()
    return read.readline().strip()


def _configure_model(spec: str) -> str:
    """Make `spec` the default model in config.toml (on top, so it stays a top-level key)."""
    path = deepacp_home() / "config.toml"
    private_dir(path.parent)
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(f"model = {json.dumps(spec)}\n{existing}", encoding="utf-8")
    return str(path)


def run_setup(model: str | None = None) -> int:
    """Ask for the provider and its key (`model`: the --model flag), store them; 0 when a
    key was stored."""
    read, out = sys.stdin, sys.stdout
    configured = _configured(model)
    provider = split_spec(configured)[0] if configured else None
    keyed = _keyed_providers()
    out.write("deepacp setup: choose your model provider and give its API key.\n")
    chosen = _choose_provider(provider if provider in keyed else next(iter(keyed)), read, out)
    if chosen is None:
        out.write("No provider chosen; nothing was stored.\n")
        return 1
    variable = keyed[chosen]
    key = _read_key(f"{chosen} API key ({variable}; not shown as you type): ", read, out)
    if not key:
        out.write("No key given; nothing was stored.\n")
        return 1
    where = store_key(variable, key)
    out.write(f"Stored the {chosen} API key in {where}.\n")
    if os.environ.get(variable):
        out.write(f"Note: {variable} is set here too, and the variable wins over the stored key.\n")
    if configured is None:
        configured = f"{chosen}:{PROVIDERS[chosen].default_model}"
        out.write(f"Model: {configured} (written to {_configure_model(configured)}).\n")
    elif split_spec(configured)[0] != chosen:
        out.write(f"Note: the model in effect is {configured}, which does not use this key.\n")
    try:
        check_provider(configured)
    except ConfigError as exc:
        out.write(f"Still to do: {exc}\n")
    else:
        out.write("Done: deepacp is ready for your editor.\n")
    return 0


def run_logout() -> int:
    """Forget the keys `run_setup` stored, saying which; keys in the environment stay."""
    forgotten = forget_keys()
    if not forgotten:
        print("No API keys stored by `deepacp setup`; nothing to forget.")
        return 0
    print(f"Forgot the stored {', '.join(forgotten)}.")
    still_set = [variable for variable in forgotten if os.environ.get(variable)]
    if still_set:
        print(f"Still set in the environment (yours to unset): {', '.join(still_set)}.")
    return 0
