"""What a user gets from the package itself: its licence, the Python it needs (what an older
one is told: tests/e2e/test_fresh_process.py), MCP in every install, and the same install
line wherever it is given."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

from deepacp.requires_python import REQUIRED

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_licence_is_the_mit_licence_pyproject_names() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert PROJECT["license"] == "MIT" and PROJECT["license-files"] == ["LICENSE"]
    assert text.startswith("MIT License\n")
    assert re.search(r"^Copyright \(c\) \d{4} the deepacp authors$", text, re.MULTILINE)
    assert "WITHOUT WARRANTY OF ANY KIND" in text


def test_pyproject_points_at_nothing_outside_the_repository() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert "../" not in text and "shared/" not in text


def test_requires_python_is_the_version_deepacp_checks() -> None:
    assert PROJECT["requires-python"] == ">=" + ".".join(map(str, REQUIRED))


@pytest.mark.parametrize(
    "module",
    ["__init__.py", "__main__.py", "_version.py", "requires_python.py", "cli.py", "cli_help.py"],
)
def test_the_modules_before_the_check_parse_on_older_pythons(module: str) -> None:
    """Everything Python reads before `check_python` runs must be syntax an older Python
    understands, or it fails with a SyntaxError instead of the one line."""
    source = (ROOT / "deepacp" / module).read_text()
    ast.parse(source, filename=module, feature_version=(3, 8))


def test_mcp_is_part_of_every_install() -> None:
    """Every ACP client passes MCP servers: they work without an extra."""
    core = {re.split(r"[<>=!\[ ;]", d, maxsplit=1)[0] for d in PROJECT["dependencies"]}
    assert "langchain-mcp-adapters" in core
    assert "mcp" not in PROJECT["optional-dependencies"]


def readme_section(title: str) -> str:
    return (ROOT / "README.md").read_text().split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def documentation() -> str:
    """The README and the documentation site's pages (docs/), where the reference is."""
    pages = sorted((ROOT / "docs").rglob("*.md"))
    return "\n".join(p.read_text() for p in [ROOT / "README.md", *pages])


CLONE = "git clone https://github.com/deepacp/deepacp && cd deepacp"
INSTALL = "pipx install '.[anthropic]'"


def test_one_install_line_that_works_from_a_clone_everywhere_it_is_given() -> None:
    """Until the first release nothing is on PyPI: every place that tells a user how to
    install gives the clone and the same line (tests/e2e/test_install.py runs it)."""
    for section in (readme_section("Install"), (ROOT / "docs" / "install.md").read_text()):
        assert f"```sh\n{CLONE}\n{INSTALL}\n```" in section
        assert "deepacp needs Python 3.11 or newer" in section
    for editor in ("zed", "jetbrains"):
        text = " ".join((ROOT / "editors" / editor / "README.md").read_text().split())
        assert f"{CLONE} && {INSTALL}" in text, editor
        assert "pip install 'deepacp" not in text, editor
    registry = " ".join((ROOT / "editors" / "registry" / "README.md").read_text().split())
    assert "for after the first release" in registry


def test_the_readme_names_only_commands_deepacp_has() -> None:
    from deepacp.cli import build_parser

    [commands] = [a for a in build_parser()._actions if a.dest == "command"]
    named = set(re.findall(r"`deepacp ([a-z][a-z-]*)", documentation()))
    # `deepacp sandbox`: the editor's terminal launcher, taken before the parser (cli.main)
    assert "logout" in named and named <= {*commands.choices, "sandbox"}, named


def test_every_deepacp_variable_is_documented() -> None:
    readme = documentation()
    read = set()
    for module in (ROOT / "deepacp").rglob("*.py"):
        read |= set(re.findall(r"[\"'](DEEPACP_[A-Z_]+)[\"']", module.read_text()))
    assert "DEEPACP_LOG_LEVEL" in read
    assert not sorted(v for v in read if v not in readme)


def test_development_lists_what_the_suite_needs_from_the_system() -> None:
    """Each tool `.ci/run` installs when missing is named, with how and what happens
    without it."""
    section = " ".join(readme_section("Development").split())
    ci = (ROOT / ".ci" / "run").read_text()
    tools = set(re.findall(r"command -v (\S+)", ci))
    assert {"nvim", "emacs", "bwrap", "initdb", "sshd", "dockerd"} <= tools
    names = {"nvim": "Neovim", "emacs": "Emacs"}
    for tool in tools:
        assert names.get(tool, tool) in section, tool
    for words in ("PostgreSQL", "`.ci/run` installs the missing ones with `apt-get`", "skipped"):
        assert words in section, words
