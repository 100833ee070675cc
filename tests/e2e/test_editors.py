"""editors/: every shipped snippet is parsed, and the command it names is started the way that
editor starts it — found on the PATH, with the snippet's arguments and environment — and
does real work. Real editors run where they are installed here (Neovim, Emacs, Node)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from deepacp.models import PROVIDERS, split_spec
from tests.support.editors import with_eglot
from tests.support.jsonc import jsonc

ROOT = Path(__file__).resolve().parents[2]
EDITORS = ROOT / "editors"
BIN = Path(sys.executable).parent  # where `pip install` put the `deepacp` command
PATH = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"
TURNS = [{"content": "Hello from deepacp."}]
NVIM = shutil.which("nvim")
EMACS = shutil.which("emacs")
NPM = shutil.which("npm")


def resolve(command: str) -> str:
    found = shutil.which(command, path=PATH)
    assert found is not None, f"{command!r} is not on the PATH an editor would search"
    return found


def check_model_env(env: dict[str, str]) -> None:
    """The snippet's model spec names a known provider, and it sets no API key: `deepacp
    setup` stores the key, and a key (or a placeholder) in the snippet would win over it."""
    provider, _ = split_spec(env["DEEPACP_MODEL"])
    key = PROVIDERS[provider].key_env
    assert key is not None and key not in env, f"the snippet sets {sorted(env)}"


async def converse(agent_factory, command: str, args: list[str], env: dict[str, str]) -> None:
    """Start the snippet's command as the editor would and run one turn through it."""
    env = {k: v for k, v in env.items() if k != "DEEPACP_MODEL"}  # no provider here: scripted
    async with agent_factory(TURNS, command=(resolve(command), *args), env=env) as agent:
        assert agent.info.protocol_version == 1
        session = await agent.new_session()
        response = await agent.prompt(session, "hi")
        assert response.stop_reason == "end_turn"
        assert agent.client.text(session) == "Hello from deepacp."


# ACP: Zed, JetBrains, VS Code's ACP extensions


async def test_zed_settings_snippet_starts_a_working_agent(agent_factory) -> None:
    settings = jsonc((EDITORS / "zed" / "settings.json").read_text())
    [(name, server)] = settings["agent_servers"].items()
    assert name == "deepacp" and server["type"] == "custom"
    check_model_env(server["env"])
    await converse(agent_factory, server["command"], server["args"], server["env"])


async def test_jetbrains_snippet_starts_a_working_agent(agent_factory) -> None:
    config = json.loads((EDITORS / "jetbrains" / "acp.json").read_text())
    server = config["agent_servers"]["deepacp"]
    check_model_env(server["env"])
    await converse(agent_factory, server["command"], server["args"], server["env"])


async def test_vscode_acp_snippet_starts_a_working_agent(agent_factory) -> None:
    readme = (EDITORS / "vscode" / "README.md").read_text()
    [block] = [b for b in re.findall(r"```json\n(.+?)\n```", readme, re.DOTALL) if "acp." in b]
    server = jsonc("{" + block + "}")["acp.agents"]["deepacp"]
    check_model_env(server["env"])
    await converse(agent_factory, server["command"], server["args"], server["env"])


# Neovim's ACP plugins: the snippets run in a real Neovim, the plugins stubbed

NVIM_CAPTURE = """
local out = {}
package.preload["avante"] = function()
  return { setup = function(config)
    local p = config.acp_providers[config.provider]
    out = { command = p.command, args = p.args, env = p.env }
  end }
end
package.preload["codecompanion.adapters"] = function()
  return { extend = function(base, fields) fields.base = base; return fields end }
end
package.preload["codecompanion"] = function()
  return { setup = function(config)
    local name = config.interactions.chat.adapter
    local a = config.adapters.acp[name]()
    local cmd = a.commands.default
    out = { name = a.name, base = a.base, command = cmd[1], args = { unpack(cmd, 2) },
            env = a.env, auth_method = a.defaults.auth_method }
  end }
end
local ok, err = pcall(dofile, os.getenv("SNIPPET"))
local file = io.open(os.getenv("CAPTURE"), "w")
file:write(ok and vim.json.encode(out) or vim.json.encode({ error = tostring(err) }))
file:close()
vim.cmd("qall!")
"""


def run_in_neovim(snippet: Path, tmp_path: Path) -> dict:
    harness = tmp_path / "capture.lua"
    harness.write_text(NVIM_CAPTURE)
    capture = tmp_path / "capture.json"
    env = {**os.environ, "SNIPPET": str(snippet), "CAPTURE": str(capture)}
    subprocess.run(
        [NVIM, "--headless", "-n", "-u", "NONE", "-i", "NONE", "-c", f"luafile {harness}"],
        env=env,
        capture_output=True,
        timeout=60,
    )
    out = json.loads(capture.read_text())
    assert "error" not in out, out
    return out


@pytest.mark.skipif(NVIM is None, reason="Neovim is not installed (.ci/run installs it)")
async def test_avante_snippet_starts_a_working_agent(agent_factory, tmp_path: Path) -> None:
    provider = run_in_neovim(EDITORS / "neovim" / "avante.lua", tmp_path)
    env = {k: v for k, v in provider["env"].items() if k != "ANTHROPIC_API_KEY"}  # os.getenv
    check_model_env(env)
    await converse(agent_factory, provider["command"], provider["args"], env)


@pytest.mark.skipif(NVIM is None, reason="Neovim is not installed (.ci/run installs it)")
async def test_codecompanion_snippet_starts_a_working_agent(agent_factory, tmp_path) -> None:
    adapter = run_in_neovim(EDITORS / "neovim" / "codecompanion.lua", tmp_path)
    assert adapter["name"] == "deepacp" and adapter["auth_method"] == "model-api-key"
    await converse(agent_factory, adapter["command"], adapter["args"], adapter["env"])


# LSP: Helix, Emacs, VS Code


HELIX_SERVERS = {  # Helix 25.07's languages.toml: what `language-servers` replaces
    "python": ["ty", "ruff", "jedi", "pylsp"],
    "rust": ["rust-analyzer"],
    "typescript": ["typescript-language-server"],
    "go": ["gopls", "golangci-lint-lsp"],
}


def test_helix_snippet_adds_deepacp_beside_each_language_server() -> None:
    config = tomllib.loads((EDITORS / "helix" / "languages.toml").read_text())
    server = config["language-server"]["deepacp"]
    assert resolve(server["command"]) and server["args"] == ["lsp"]
    assert set(server["config"]) <= {"model", "shell", "review"}  # LspOptions' keys
    languages = {lang["name"]: lang["language-servers"] for lang in config["language"]}
    # Helix's own servers for the language, all of them, then deepacp.
    assert languages == {name: [*usual, "deepacp"] for name, usual in HELIX_SERVERS.items()}


def test_helix_server_answers_initialize_with_the_snippet_config() -> None:
    server = tomllib.loads((EDITORS / "helix" / "languages.toml").read_text())["language-server"]
    deepacp = server["deepacp"]
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"capabilities": {}, "initializationOptions": deepacp["config"]},
    }
    body = json.dumps(request).encode()
    frame = b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    completed = subprocess.run(
        [resolve(deepacp["command"]), *deepacp["args"]],
        input=frame,
        capture_output=True,
        timeout=60,
        env={**os.environ, "PATH": PATH},
    )
    header, _, payload = completed.stdout.partition(b"\r\n\r\n")
    length = int(re.search(rb"Content-Length: (\d+)", header)[1])
    answer = json.loads(payload[:length])
    assert "deepacp.edit" in answer["result"]["capabilities"]["executeCommandProvider"]["commands"]
    assert b"unknown initializationOptions" not in completed.stderr


def test_emacs_snippet_edits_through_eglot_with_confirmation(tmp_path: Path) -> None:
    if with_eglot(EMACS) is None:
        pytest.skip("Emacs with eglot is not installed (.ci/run installs it)")
    workspace = tmp_path / "project"
    workspace.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)  # a project for eglot
    target = workspace / "version.py"
    target.write_text("VERSION = '1.0.0'\n")
    script = tmp_path / "script.json"
    edit = {"file_path": "version.py", "old_string": "1.0.0-unsaved", "new_string": "1.1.0"}
    turns = [
        {"tool_calls": [{"id": "e", "name": "edit_file", "args": edit}]},
        {"content": "Bumped."},
    ]
    script.write_text(json.dumps({"turns": turns}))
    result = tmp_path / "result.txt"
    # The model is chosen as the README says, in Emacs (the spec swapped for the script's).
    readme = (EDITORS / "emacs" / "README.md").read_text()
    [choose] = re.findall(r'^\(setenv "DEEPACP_MODEL" "[^"]+"\)$', readme, re.MULTILINE)
    choose = choose.replace("anthropic:claude-sonnet-4-5", f"scripted:{script}")
    env = {
        **{k: v for k, v in os.environ.items() if k != "DEEPACP_MODEL"},
        "PATH": PATH,
        "DEEPACP_HOME": str(tmp_path / "home"),
        "DEEPACP_EMACS_SNIPPET": str(EDITORS / "emacs" / "deepacp.el"),
        "DEEPACP_TEST_FILE": str(target),
        "DEEPACP_TEST_RESULT": str(result),
    }
    completed = subprocess.run(
        [EMACS, "--batch", "-q", "--eval", choose, "-l", str(ROOT / "tests/e2e/emacs_accept.el")],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    outcome = result.read_text() if result.exists() else f"no result: {completed.stderr[-2000:]}"
    assert outcome.startswith("OK"), outcome
    # Emacs asked before applying, the proposal was made against the unsaved buffer, and it
    # reached the disk only when the buffer was saved.
    assert "version.py" in outcome.split("\n", 1)[1]
    assert target.read_text() == "VERSION = '1.1.0'\n"


@pytest.mark.skipif(NPM is None, reason="npm is not installed")
@pytest.mark.slow(reason="npm ci from the registry, a TypeScript build and a .vsix package")
def test_vscode_extension_builds_and_its_helpers_pass(tmp_path: Path) -> None:
    source = EDITORS / "vscode"
    package = json.loads((source / "package.json").read_text())
    extension = (source / "src" / "extension.ts").read_text()
    for command in package["contributes"]["commands"]:
        assert f'registerCommand("{command["command"]}"' in extension
    copy = tmp_path / "vscode"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns("node_modules", "out"))
    steps = (["ci", "--no-audit", "--no-fund"], ["run", "compile"], ["test"], ["run", "package"])
    for step in steps:
        completed = subprocess.run(
            [NPM, *step], cwd=copy, capture_output=True, text=True, timeout=600
        )
        assert completed.returncode == 0, f"npm {' '.join(step)}:\n{completed.stdout[-3000:]}"
    assert (copy / "out" / "extension.js").is_file()
    # The README installs the .vsix that `npm run package` made, with a real `code` command.
    readme = (source / "README.md").read_text()
    [install] = re.findall(r"^code --install-extension (\S+)$", readme, re.MULTILINE)
    with zipfile.ZipFile(copy / install) as vsix:
        assert "extension/out/extension.js" in vsix.namelist()
