"""The documentation site builds with warnings as errors, so every link between its pages
and every anchor resolves; every page is in the nav; and the links that leave it (to the
repository's files) and the README's links into it resolve too."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
REPO_FILE = re.compile(r"\]\(https://github\.com/deepacp/deepacp/blob/main/([^)#\s]+)(#[^)\s]*)?\)")
MARKDOWN_LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as `mkdocs build --strict` makes it."""
    out = tmp_path_factory.mktemp("site")
    command = ["build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)]
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", *command],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=120,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert "WARNING" not in built.stderr, built.stderr
    return out


def config() -> dict:
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text())


def nav_pages(nav: list) -> list[str]:
    pages: list[str] = []
    for entry in nav:
        for value in entry.values() if isinstance(entry, dict) else [entry]:
            pages += nav_pages(value) if isinstance(value, list) else [value]
    return pages


def ids(page: Path) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', page.read_text()))


def test_the_site_checks_links_and_anchors_as_errors(site: Path) -> None:
    settings = config()
    assert settings["strict"] is True and settings["theme"]["name"] == "material"
    validation = settings["validation"]
    assert validation["links"]["anchors"] == "warn"  # a warning fails the strict build
    assert validation["links"]["not_found"] == "warn"
    assert validation["nav"]["omitted_files"] == "warn"
    assert (site / "index.html").exists() and (site / "models" / "index.html").exists()


def test_every_page_is_in_the_nav() -> None:
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    listed = nav_pages(config()["nav"])
    assert sorted(listed) == sorted(pages)
    assert len(listed) == len(set(listed))


def test_links_to_the_repository_name_files_it_has(site: Path) -> None:
    """Links out of the site to the repository (editor snippets, THREAT_MODEL.md) are not
    checked by mkdocs: a renamed file must not leave one dangling."""
    for page in DOCS.rglob("*.md"):
        for path, anchor in REPO_FILE.findall(page.read_text()):
            assert (ROOT / path).exists(), (page.name, path)
            if path == "README.md" and anchor:
                assert f"\n## {anchor[1:].capitalize()}\n" in (ROOT / path).read_text()


def test_the_readme_links_resolve_into_the_site(site: Path) -> None:
    """The README is the landing page: each of its links names a file here, and a link
    into a docs page names an anchor that page has."""
    readme = (ROOT / "README.md").read_text()
    into_docs = 0
    for target in MARKDOWN_LINK.findall(readme):
        if target.startswith(("http://", "https://")):
            continue
        path, _, anchor = target.partition("#")
        assert (ROOT / path).exists(), target
        if path.startswith("docs/") and path.endswith(".md"):
            into_docs += 1
            html = site / path.removeprefix("docs/").removesuffix(".md") / "index.html"
            if path == "docs/index.md":
                html = site / "index.html"
            assert html.exists(), target
            assert not anchor or anchor in ids(html), target
    assert into_docs >= 10


def test_the_reference_moved_to_the_site_whole() -> None:
    """Each section the README held before it became a landing page is a docs page (or a
    part of one) now."""
    headings = "\n".join(p.read_text() for p in DOCS.rglob("*.md"))
    for title in (
        "In an agent panel (ACP): `deepacp --stdio`",
        "Inline review in any editor (LSP): `deepacp lsp`",
        "Goals",
        "Models",
        "Prompt caching",
        "Tokens and cost",
        "Harness profiles",
        "Paths",
        "Rewind",
        "Sandbox",
        "Commands over the proposal (LSP)",
        "Hooks",
        "Scaling out",
        "Sessions in PostgreSQL",
        "Remote workspaces",
        "The harness on a LangGraph server",
        "Python API",
    ):
        assert re.search(rf"^#+ {re.escape(title)}$", headings, re.MULTILINE), title
