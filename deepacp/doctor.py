"""`deepacp doctor`: what to check when the editor says the agent failed to start."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib import metadata
from importlib.resources import files
from pathlib import Path

from deepacp._version import __version__
from deepacp.backends.sandbox import sandbox_problem
from deepacp.config import database_url, deepacp_home, load_config, sandbox_policy
from deepacp.errors import ConfigError, StoreError
from deepacp.installation import command_path, server_command
from deepacp.logs import log_path
from deepacp.models import PROVIDERS, SCRIPTED, check_provider, split_spec
from deepacp.private import database_problems, loose_modes

PACKAGES = ("langchain", "langgraph", "agent-client-protocol", "pygls")
EDITORS = {
    "zed": ("Zed", "zed/settings.json", "~/.config/zed/settings.json"),
    "jetbrains": ("a JetBrains IDE", "jetbrains/acp.json", "~/.jetbrains/acp.json"),
    "vscode": ("VS Code", "vscode/README.md", "editors/vscode (an extension)"),
    "neovim": ("Neovim", "neovim/README.md", "your init.lua"),
    "emacs": ("Emacs", "emacs/deepacp.el", "your init file"),
    "helix": ("Helix", "helix/languages.toml", "~/.config/helix/languages.toml"),
}


@dataclass
class Check:
    ok: bool
    text: str
    warn: bool = False
    """Works, but less safely than it could (the session says so too)."""

    @property
    def label(self) -> str:
        return "FAIL" if not self.ok else "warn" if self.warn else "ok  "


def detect_editor(env: dict[str, str]) -> str | None:
    """The editor this terminal runs in, from the variables editors set."""
    if env.get("ZED_TERM") or env.get("TERM_PROGRAM", "").lower() == "zed":
        return "zed"
    if env.get("TERM_PROGRAM") == "vscode":
        return "vscode"
    if "JetBrains" in env.get("TERMINAL_EMULATOR", ""):
        return "jetbrains"
    if env.get("NVIM") or env.get("NVIM_LISTEN_ADDRESS"):
        return "neovim"
    if env.get("INSIDE_EMACS"):
        return "emacs"
    if env.get("HELIX_RUNTIME"):
        return "helix"
    return None


def model_checks(flag: str | None) -> list[Check]:
    sources = [("--model", flag), ("DEEPACP_MODEL", os.environ.get("DEEPACP_MODEL"))]
    try:
        sources.append(("config.toml", load_config().model))
    except ConfigError as exc:
        return [Check(False, str(exc))]
    origin, spec = next(((o, s) for o, s in sources if s), (None, None))
    if spec is None:
        return [
            Check(
                False,
                "no model configured: run `deepacp setup`, or set DEEPACP_MODEL or `model` in "
                "config.toml",
            )
        ]
    checks = [Check(True, f"model {spec} (from {origin})")]
    try:
        provider, _ = split_spec(spec)
        check_provider(spec)
    except ConfigError as exc:
        return [*checks, Check(False, str(exc))]
    info = PROVIDERS.get(provider)
    if info and info.key_env:
        checks.append(Check(True, f"{info.key_env} is set (value not shown)"))
    elif provider != SCRIPTED and info is None:
        checks.append(
            Check(True, f"provider {provider!r}: LangChain checks it when the model loads")
        )
    return checks


def ripgrep_check() -> Check:
    from deepacp.backends.search import ripgrep

    rg = ripgrep()
    if rg is None:
        return Check(True, "rg not found: grep uses the (slower) pure-Python search")
    version = subprocess.run([rg, "--version"], capture_output=True, text=True).stdout.split("\n")[
        0
    ]
    return Check(True, f"{version} at {rg}")


def sandbox_check() -> Check:
    """Whether commands run in the sandbox here, and under which policy by default."""
    problem = sandbox_problem()
    if problem is not None:
        return Check(True, f"commands are not sandboxed: {problem}", warn=True)
    try:
        policy = sandbox_policy(None)
    except ConfigError as exc:
        return Check(False, str(exc))
    bwrap = shutil.which("bwrap") or "bwrap"
    version = subprocess.run([bwrap, "--version"], capture_output=True, text=True).stdout.strip()
    if policy == "off":
        return Check(True, f"{version} works, but config.toml turns the sandbox off", warn=True)
    return Check(True, f"{version}: commands run sandboxed (policy {policy})")


def home_checks() -> list[Check]:
    """Writable, private (before anything here tightens it), and its databases whole."""
    home = deepacp_home()
    loose = loose_modes(home)  # first: making the home would tighten what we report
    try:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=home):
            pass
    except OSError as exc:
        return [Check(False, f"$DEEPACP_HOME {home} is not writable: {exc.strerror}")]
    checks = [Check(True, f"$DEEPACP_HOME {home} is writable")]
    checks += [Check(False, problem) for problem in loose]
    if not loose:
        checks.append(Check(True, f"$DEEPACP_HOME {home} is private (0700, files 0600)"))
    broken = database_problems(home)
    checks += [Check(False, problem) for problem in broken]
    if not broken:
        checks.append(Check(True, "the session databases pass SQLite's integrity check"))
    return checks


def database_checks() -> list[Check]:
    """With sessions in PostgreSQL: whether the database answers, and its schema version
    (read only: migrations run when a session first needs the database)."""
    try:
        url = database_url()
    except ConfigError:
        return []  # a broken config.toml is reported with the model
    if url is None:
        return []
    from deepacp.exposure import database_exposure
    from deepacp.session import LATEST, PostgresStore, schema_version

    store = PostgresStore(deepacp_home(), url)
    try:
        with store.connect() as conn:
            version = schema_version(conn)
            server = conn.info.server_version
            exposed = database_exposure(conn, url)
    except StoreError as exc:
        return [Check(False, str(exc))]
    checks = [
        Check(True, f"session database {store.where} is reachable (PostgreSQL {server // 10000})")
    ]
    checks += [Check(True, problem, warn=True) for problem in exposed]
    if version == LATEST:
        checks.append(Check(True, f"session database schema version {version}"))
    elif version < LATEST:
        checks.append(
            Check(
                True,
                f"session database schema version {version}: deepacp migrates it to "
                f"{LATEST} when it first opens a session",
                warn=True,
            )
        )
    else:
        checks.append(
            Check(
                True,
                f"session database schema version {version} is newer than this deepacp "
                f"knows ({LATEST}): upgrade deepacp on this machine",
                warn=True,
            )
        )
    return checks


def langgraph_checks(url: str | None) -> list[Check]:
    """With `--server`: whether that LangGraph server lets in only the holder of its token,
    and takes ours."""
    if url is None:
        return []
    import httpx

    from deepacp.exposure import STUDIO, server_status
    from deepacp.session import TOKEN_VARIABLE, token_headers

    ours = token_headers()
    try:
        anyone = {server_status(url), server_status(url, STUDIO)}
        status = server_status(url, ours) if ours else None
    except httpx.HTTPError as exc:
        return [Check(False, f"the LangGraph server at {url} is not reachable ({exc})")]
    if not anyone <= {401, 403}:
        return [
            Check(
                True,
                f"the LangGraph server at {url} answers without a token, and every account on "
                f"this machine can reach its port: start it with {TOKEN_VARIABLE} set "
                "(docs/scaling-out.md: The harness on a LangGraph server) and set the same here",
                warn=True,
            )
        ]
    if status is None:
        return [Check(False, f"the LangGraph server at {url} wants a token: set {TOKEN_VARIABLE}")]
    if status in (401, 403):
        return [
            Check(
                False,
                f"the LangGraph server at {url} refuses {TOKEN_VARIABLE}: set it to the token "
                "the server was started with",
            )
        ]
    return [Check(True, f"the LangGraph server at {url} lets in only the holder of its token")]


def server_check() -> Check:
    """Start `deepacp --stdio` as an editor would and time its `initialize` answer."""
    command = server_command()
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}
    started = time.perf_counter()
    try:
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write((json.dumps(request) + "\n").encode())
        process.stdin.flush()
        answer = json.loads(process.stdout.readline() or b"{}")
        elapsed = (time.perf_counter() - started) * 1000
        process.stdin.close()
        process.wait(timeout=10)
    except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
        return Check(False, f"deepacp --stdio did not start: {exc}")
    if "result" not in answer:
        return Check(False, f"deepacp --stdio answered initialize with {answer}")
    return Check(True, f"deepacp --stdio answers initialize ({elapsed:.0f} ms)")


BARE_COMMAND = re.compile(
    r'(?P<key>"command"\s*:\s*|\bcommand\s*=\s*)"deepacp"'  # JSON, TOML, Lua tables
    r'|"deepacp"(?P<args>\s*,?\s*"(?:lsp|--stdio)")'  # a command line: Lua, Emacs Lisp
)


def with_command(text: str, path: str) -> str:
    """`text` (a snippet) with its bare `deepacp` command replaced by `path`."""
    quoted = json.dumps(path)
    return BARE_COMMAND.sub(lambda m: f"{m['key'] or ''}{quoted}{m['args'] or ''}", text)


def snippet(editor: str, command: str = "deepacp") -> str:
    name, relative, where = EDITORS[editor]
    text = (files("deepacp") / "_editors" / relative).read_text(encoding="utf-8")
    return f"You seem to be in {name}. Put this in {where}:\n\n{with_command(text, command)}"


def run_doctor(model_flag: str | None = None, server: str | None = None) -> int:
    checks = [Check(sys.version_info >= (3, 11), f"Python {sys.version.split()[0]}")]
    versions = ", ".join(f"{p} {metadata.version(p)}" for p in PACKAGES)
    checks.append(Check(True, f"deepacp {__version__} ({versions})"))
    checks += model_checks(model_flag)
    checks += [ripgrep_check(), sandbox_check(), *home_checks(), *database_checks()]
    checks += langgraph_checks(server)
    checks.append(server_check())
    for check in checks:
        print(f"{check.label} {check.text}")
    print(f"logs: {log_path()}")
    command = command_path()
    print(f"command: {command} (give an editor this full path when it does not find `deepacp`)")
    editor = detect_editor(dict(os.environ))
    if editor is not None:
        print("\n" + snippet(editor, command))
    else:
        print(f"\nEditor set-up snippets: {Path(str(files('deepacp') / '_editors'))}")
    return 0 if all(c.ok for c in checks) else 1
