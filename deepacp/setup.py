"""`deepacp setup`: choose the model provider and store its API key, or a local server, in
a terminal.

This is deepacp's terminal authentication: an ACP client runs it (`deepacp setup`, or
the editor's own command line with `setup` appended) when the user signs in. The key is
read without echo and never printed, and checked with one request (`deepacp.probes`): a
refused key is not stored, and one that could not be checked only if the user says so. It
goes to the OS keyring where one is usable, else to a file only the user can read
(`deepacp.credentials`). When no model is configured yet, the provider's default model is
written to config.toml. A local server (Ollama, or an OpenAI-compatible one) is asked for
its models; the chosen one and the server's URL go to config.toml.
"""

from __future__ import annotations

import getpass
import os
import sys
from typing import TextIO

from deepacp.config_write import set_config
from deepacp.credentials import forget_keys, store_key
from deepacp.errors import ConfigError, ModelConfigError
from deepacp.models import PROVIDERS, check_provider, configured_spec, split_spec
from deepacp.probes import OLLAMA_URL, KeyRefused, NotChecked, check_key, local_server

LOCAL = "local"
LOCAL_LABEL = "local (Ollama, llama.cpp, LM Studio, vLLM)"


def _keyed_providers() -> dict[str, str]:
    """Provider name -> its key variable, for the providers that need a key."""
    return {name: info.key_env for name, info in PROVIDERS.items() if info.key_env}


def _configured(model: str | None) -> str | None:
    try:
        return configured_spec(model)
    except ModelConfigError:
        return None


def _ask(prompt: str, read: TextIO, out: TextIO) -> str | None:
    """One answer, stripped; None when the input ended."""
    out.write(prompt)
    out.flush()
    line = read.readline()
    if not read.isatty():
        out.write("\n")  # what a terminal shows when Enter is pressed
    return line.strip() if line else None


def _pick(label: str, choices: list[str], default: str, read: TextIO, out: TextIO) -> str | None:
    """One of `choices`, by number or name (`default` on Enter); None when the input ended."""
    shown = [LOCAL_LABEL if c == LOCAL else c for c in choices]
    listed = ", ".join(f"{i} {name}" for i, name in enumerate(shown, start=1))
    while (answer := _ask(f"{label.capitalize()}: {listed} [{default}]: ", read, out)) is not None:
        answer = answer or default
        if answer.isdigit() and 1 <= int(answer) <= len(choices):
            return choices[int(answer) - 1]
        named = [c for c in choices if c.lower() == answer.lower()]
        if named:
            return named[0]
        out.write(f"Unknown {label} {answer!r}; type one of the names or numbers.\n")
    return None


def _read_key(prompt: str, read: TextIO, out: TextIO) -> str:
    """The key, typed without echo on a terminal (or one line from a pipe)."""
    if read.isatty():
        return getpass.getpass(prompt).strip()
    return _ask(prompt, read, out) or ""


def _checked_key(provider: str, read: TextIO, out: TextIO) -> str | None:
    """A key `provider` accepted, or one the user keeps unchecked; None: none to store."""
    variable = PROVIDERS[provider].key_env
    prompt = f"{provider} API key ({variable}; not shown as you type): "
    while key := _read_key(prompt, read, out):
        try:
            models = check_key(provider, key)
        except KeyRefused as exc:
            out.write(f"{exc}\nType another key, or press Enter to stop.\n")
            continue
        except NotChecked as exc:
            out.write(f"Could not check the key: {exc}\n")
            keep = _ask("Keep the key anyway? [y/N]: ", read, out) or ""
            if keep.lower() in ("y", "yes"):
                return key
            out.write("The key was not kept; nothing was stored.\n")
            return None
        out.write(f"The key works: {provider} lists {len(models)} models for it.\n")
        return key
    out.write("No key given; nothing was stored.\n")
    return None


def _local_server(read: TextIO, out: TextIO) -> int:
    """Find the server at a URL the user gives, choose one of its models, configure both."""
    out.write(
        "A local server: Ollama, or one that speaks OpenAI's API (llama.cpp, LM Studio, vLLM).\n"
    )
    while True:
        url = _ask(f"Server URL [{OLLAMA_URL}]: ", read, out)
        if url is None:
            out.write("No server chosen; nothing was written.\n")
            return 1
        try:
            server = local_server(url or OLLAMA_URL)
            break
        except NotChecked as exc:
            out.write(f"{exc}\n")
    kind = "Ollama" if server.provider == "ollama" else "An OpenAI-compatible server"
    if not server.models:
        out.write(
            f"{kind} at {server.base_url} serves no model yet: load or pull one, then "
            "run `deepacp setup` again.\n"
        )
        return 1
    out.write(f"{kind} answers at {server.base_url}.\n")
    model = _pick("model", list(server.models), server.models[0], read, out)
    if model is None:
        out.write("No model chosen; nothing was written.\n")
        return 1
    spec = f"{server.provider}:{model}"
    set_config("base_url", server.base_url, f"providers.{server.provider}")
    out.write(f"Model: {spec} (written to {set_config('model', spec)}).\n")
    variable = PROVIDERS[server.provider].base_url_env or ""
    if os.environ.get(variable, server.base_url) != server.base_url:
        out.write(f"Note: {variable} is set here too, and the variable wins over config.toml.\n")
    return _ready(spec, out)


def _ready(spec: str, out: TextIO) -> int:
    try:
        check_provider(spec)
    except ConfigError as exc:
        out.write(f"Still to do: {exc}\n")
    else:
        out.write("Done: deepacp is ready for your editor.\n")
    return 0


def run_setup(model: str | None = None) -> int:
    """Ask for the provider and its key (`model`: the --model flag) and check the key, or
    find a local server; 0 when a key or a server was configured."""
    read, out = sys.stdin, sys.stdout
    configured = _configured(model)
    provider = split_spec(configured)[0] if configured else None
    keyed = _keyed_providers()
    out.write("deepacp setup: choose your model provider and give its API key.\n")
    default = provider if provider in keyed else next(iter(keyed))
    chosen = _pick("provider", [*keyed, LOCAL], default, read, out)
    if chosen is None:
        out.write("No provider chosen; nothing was stored.\n")
        return 1
    if chosen == LOCAL:
        return _local_server(read, out)
    variable = keyed[chosen]
    key = _checked_key(chosen, read, out)
    if key is None:
        return 1
    where = store_key(variable, key)
    out.write(f"Stored the {chosen} API key in {where}.\n")
    if os.environ.get(variable):
        out.write(f"Note: {variable} is set here too, and the variable wins over the stored key.\n")
    if configured is None:
        configured = f"{chosen}:{PROVIDERS[chosen].default_model}"
        out.write(f"Model: {configured} (written to {set_config('model', configured)}).\n")
    elif split_spec(configured)[0] != chosen:
        out.write(f"Note: the model in effect is {configured}, which does not use this key.\n")
    return _ready(configured, out)


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
