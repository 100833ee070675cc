"""glob and grep: ripgrep and the pure-Python path agree, and both honour .gitignore."""

import os
from pathlib import Path

import pytest

from deepacp.backends import BackendError, FilesystemBackend, GrepQuery
from deepacp.backends.search import compile_glob, glob_files, grep_files, ripgrep

needs_rg = pytest.mark.skipif(ripgrep() is None, reason="rg is not installed")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    files = {
        "README.md": "hello world\n",
        "src/app.py": "import os\nprint('hello')\n",
        "src/util.py": "def hello():\n    return 'HELLO'\n",
        "src/gen/out.py": "hello generated\n",
        "src/keep.log": "hello kept log\n",
        "src/drop.log": "hello dropped log\n",
        "docs/guide.md": "Say hello.\nhello again\n",
        ".github/ci.yml": "run: hello\n",
        "node_modules/pkg/index.js": "hello from deps\n",
        "nested/.gitignore": "*.tmp\n",
        "nested/a.tmp": "hello tmp\n",
        "nested/b.txt": "hello b (a|b) regex.chars\n",
        "data.bin": "hello\0binary\n",
        "weird name.txt": "hello: colon and space\n",
    }
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / ".gitignore").write_text("node_modules/\nsrc/gen/\n*.log\n!keep.log\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("hello from git\n")
    return tmp_path


EXPECTED_FILES = [
    ".github/ci.yml",
    ".gitignore",
    "README.md",
    "data.bin",
    "docs/guide.md",
    "nested/.gitignore",
    "nested/b.txt",
    "src/app.py",
    "src/keep.log",
    "src/util.py",
    "weird name.txt",
]


async def list_files(root: Path, start: str = "", *, use_rg: bool) -> list[str]:
    return await glob_files(root, start, lambda path: True, limit=10**6, use_rg=use_rg)


async def test_python_walk_honours_gitignore(tree: Path) -> None:
    assert await list_files(tree, use_rg=False) == EXPECTED_FILES


@needs_rg
async def test_rg_and_python_list_the_same_files(tree: Path) -> None:
    assert await list_files(tree, use_rg=True) == EXPECTED_FILES
    assert await list_files(tree, "src", use_rg=True) == await list_files(tree, "src", use_rg=False)


SEARCHES = [
    {"pattern": "hello"},
    {"pattern": "hello", "start": "src"},
    {"pattern": "hello", "glob": "*.md"},
    {"pattern": "hello", "glob": "*.log"},
    {"pattern": "hello", "glob": "*"},
    {"pattern": "hello", "glob": "src/*.py"},
    {"pattern": "HELLO", "ignore_case": True},
    {"pattern": "(a|b)"},
    {"pattern": r"hel+o\s+\w+", "regex": True},
    {"pattern": "hello", "start": "docs/guide.md"},
    {"pattern": "nothing-matches-this"},
]


@needs_rg
@pytest.mark.parametrize(
    "search", SEARCHES, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items())
)
async def test_rg_and_python_grep_agree(tree: Path, search: dict) -> None:
    kwargs = dict(search)
    query = GrepQuery(kwargs.pop("pattern"), kwargs.pop("start", ""), **kwargs)
    with_rg = await grep_files(tree, query, use_rg=True)
    with_python = await grep_files(tree, query, use_rg=False)
    assert with_rg == with_python


@needs_rg
async def test_a_regex_rg_cannot_run_is_refused_every_time(tree: Path) -> None:
    """rg exits 2 on a lookahead; it is refused with what rg supports (never handed to
    Python's backtracking `re`), and that exit code must be read right on every run (it once
    raced with asyncio's child watcher and read 255, and the search came back empty)."""
    for _ in range(100):
        with pytest.raises(BackendError, match="look-around"):
            await grep_files(tree, GrepQuery("hel(?=lo)", regex=True), use_rg=True)


async def test_grep_skips_ignored_binary_and_git(tree: Path) -> None:
    paths = {m.path for m in await grep_files(tree, GrepQuery("hello"), use_rg=False)}
    assert "src/app.py" in paths and "src/keep.log" in paths
    assert not paths & {"src/drop.log", "src/gen/out.py", "node_modules/pkg/index.js"}
    assert not paths & {"nested/a.tmp", "data.bin", ".git/config"}


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.py", "src/app.py", True),
        ("*.py", "src/sub/app.py", False),
        ("**/*.py", "app.py", True),
        ("**/*.py", "a/b/c.py", True),
        ("src/**", "src/a/b", True),
        ("*.{ts,tsx}", "x.tsx", True),
        ("*.{ts,tsx}", "x.js", False),
        ("[ab].txt", "a.txt", True),
        ("[!ab].txt", "a.txt", False),
        ("?.md", "ab.md", False),
    ],
)
def test_glob_semantics(pattern: str, path: str, matches: bool) -> None:
    relative = path.removeprefix("src/") if pattern == "*.py" else path
    assert compile_glob(pattern).match(relative) is matches


@pytest.mark.parametrize("use_rg", [pytest.param(True, marks=needs_rg), False])
async def test_backend_glob(tree: Path, use_rg: bool) -> None:
    backend = FilesystemBackend(tree, use_ripgrep=use_rg)
    assert await backend.glob("*.py", "src") == ["src/app.py", "src/util.py"]
    assert await backend.glob("**/*.md") == ["README.md", "docs/guide.md"]
    assert await backend.glob("*.md") == ["README.md"]


GLOBS = ["**/*.py", "**/?pp.py", "**/.git*", "**/*.{py,md}", "**/[au]*.py", "src/**/*.py"]
IGNORED_TOO = ["**/*", "*", "**/*.log", "**/config"]  # rg's --glob would list ignored files


@needs_rg
@pytest.mark.parametrize("pattern", [*GLOBS, *IGNORED_TOO, "**/weird name.txt", "**/a:b"])
@pytest.mark.parametrize("start", ["", "src", "src/app.py"])
async def test_rg_and_python_glob_alike(tree: Path, pattern: str, start: str) -> None:
    fast, slow = (FilesystemBackend(tree, use_ripgrep=flag) for flag in (True, False))
    assert await fast.glob(pattern, start) == await slow.glob(pattern, start)
    for limit in (1, 2, 3):  # cut at the limit: the first in path order on both paths
        assert await fast.glob(pattern, start, limit=limit) == await slow.glob(
            pattern, start, limit=limit
        )


@needs_rg
@pytest.mark.parametrize("target", ["/dev/zero", "/dev/stdout", "fifo"])
async def test_a_gitignore_rg_cannot_read_is_searched_without_rg(
    tree: Path, target: str, monkeypatch
) -> None:
    """rg reads a `.gitignore` whatever it is: linked to `/dev/zero` it dies at its memory
    bound, to its own stdout or made a FIFO it waits; either way the search is done in
    Python, which reads regular files only, and gives the same answer."""
    from deepacp.backends import ripgrep as rg

    monkeypatch.setattr(rg, "RG_SILENCE", 0.5, raising=False)
    monkeypatch.setattr(rg, "RG_MEMORY", 256 << 20, raising=False)
    hostile = tree / "docs" / ".gitignore"
    if target == "fifo":
        os.mkfifo(hostile)
    else:
        hostile.symlink_to(target)
    assert await list_files(tree, use_rg=True) == await list_files(tree, use_rg=False)
    query = GrepQuery("hello")
    assert await grep_files(tree, query, use_rg=True) == await grep_files(tree, query, use_rg=False)
