"""Every file tool's happy and error paths, through the agent, on disk and in state."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from deepacp.backends import FilesystemBackend, LocalShellBackend, StateBackend

INITIAL = {"src/app.py": "def main():\n    return 1\n", "README.md": "# project\n"}


class Env:
    """A backend plus how to seed and inspect its files."""

    def __init__(self, kind: str, root: Path) -> None:
        self.kind = kind
        self.root = root
        if kind == "disk":
            for rel, text in INITIAL.items():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(text)
            self.backend: Any = LocalShellBackend(root)
            self.files = None
        else:
            self.backend = StateBackend()
            self.files = {p: {"content": t, "modified_at": "x"} for p, t in INITIAL.items()}

    def read(self, result: dict, rel: str) -> str | None:
        if self.kind == "disk":
            path = self.root / rel
            return path.read_text() if path.exists() else None
        record = result.get("files", {}).get(rel)
        return record["content"] if record else None


@pytest.fixture(params=["disk", "state"])
def env(request: pytest.FixtureRequest, tmp_path: Path) -> Env:
    return Env(request.param, tmp_path)


async def call(run_calls, env: Env, name: str, **args: Any) -> tuple[Any, dict]:
    result = await run_calls(env.backend, [{"name": name, "args": args}], files=env.files)
    return result["results"]["call_0"], result


async def test_read_file_numbers_lines_and_pages(run_calls, env: Env) -> None:
    message, _ = await call(run_calls, env, "read_file", file_path="src/app.py")
    assert message.status == "success"
    assert message.content == "     1\tdef main():\n     2\t    return 1"
    message, _ = await call(run_calls, env, "read_file", file_path="src/app.py", offset=1, limit=1)
    assert message.content == "     2\t    return 1"


async def test_read_file_tells_how_to_continue(run_calls, env: Env) -> None:
    env.files = env.files and {
        **env.files,
        "long.txt": {"content": "x\n" * 250, "modified_at": "x"},
    }
    if env.kind == "disk":
        (env.root / "long.txt").write_text("x\n" * 250)
    message, _ = await call(run_calls, env, "read_file", file_path="long.txt")
    assert message.content.count("\n") == 100
    assert "offset=100" in message.content and "of 250" in message.content


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"file_path": "missing.py"}, "no such file"),
        ({"file_path": "src"}, "is a directory"),
        ({"file_path": "src/app.py", "offset": 50}, "past the end"),
    ],
)
async def test_read_file_errors(run_calls, env: Env, args: dict, error: str) -> None:
    message, _ = await call(run_calls, env, "read_file", **args)
    assert message.status == "error"
    assert error in message.content


async def test_write_file_creates_and_overwrites(run_calls, env: Env) -> None:
    message, result = await call(
        run_calls, env, "write_file", file_path="pkg/new.py", content="a\n"
    )
    assert message.status == "success" and "Created pkg/new.py" in message.content
    assert env.read(result, "pkg/new.py") == "a\n"
    assert message.artifact["old_text"] is None and message.artifact["new_text"] == "a\n"
    message, result = await call(
        run_calls, env, "write_file", file_path="README.md", content="new\n"
    )
    assert "Rewrote README.md" in message.content
    assert env.read(result, "README.md") == "new\n"
    assert message.artifact["old_text"] == "# project\n"


async def test_edit_file_replaces_and_reports_whole_file(run_calls, env: Env) -> None:
    message, result = await call(
        run_calls,
        env,
        "edit_file",
        file_path="src/app.py",
        old_string="return 1",
        new_string="return 2",
    )
    assert message.status == "success"
    assert "replaced 1 occurrence" in message.content and "return 2" in message.content
    assert env.read(result, "src/app.py") == "def main():\n    return 2\n"
    assert message.artifact["old_text"] == INITIAL["src/app.py"]
    assert message.artifact["new_text"] == "def main():\n    return 2\n"


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"old_string": "nope", "new_string": "x"}, "not found"),
        ({"old_string": "  return 1", "new_string": "x", "file_path": "README.md"}, "not found"),
        ({"old_string": "", "new_string": "x"}, "empty"),
        ({"old_string": "return 1", "new_string": "return 1"}, "identical"),
        ({"old_string": "x", "new_string": "y", "file_path": "missing.py"}, "no such file"),
    ],
)
async def test_edit_file_errors(run_calls, env: Env, args: dict, error: str) -> None:
    args.setdefault("file_path", "src/app.py")
    message, result = await call(run_calls, env, "edit_file", **args)
    assert message.status == "error" and error in message.content
    assert env.read(result, "src/app.py") == INITIAL["src/app.py"]


async def test_edit_file_requires_unique_match_unless_replace_all(run_calls, env: Env) -> None:
    text = "a = 1\nb = 1\n"
    env.files = env.files and {**env.files, "dup.py": {"content": text, "modified_at": "x"}}
    if env.kind == "disk":
        (env.root / "dup.py").write_text(text)
    message, _ = await call(
        run_calls, env, "edit_file", file_path="dup.py", old_string="1", new_string="2"
    )
    assert message.status == "error"
    assert "occurs 2 times" in message.content and "lines 1, 2" in message.content
    message, result = await call(
        run_calls,
        env,
        "edit_file",
        file_path="dup.py",
        old_string="1",
        new_string="2",
        replace_all=True,
    )
    assert message.status == "success" and env.read(result, "dup.py") == "a = 2\nb = 2\n"


async def test_delete(run_calls, env: Env) -> None:
    message, result = await call(run_calls, env, "delete", file_path="README.md")
    assert message.status == "success" and env.read(result, "README.md") is None
    assert message.artifact["old_text"] == "# project\n"
    message, _ = await call(run_calls, env, "delete", file_path="README.md")
    # Each call starts from the initial files again on state; on disk it is gone.
    if env.kind == "disk":
        assert message.status == "error" and "no such file" in message.content


async def test_ls_glob_grep(run_calls, env: Env) -> None:
    message, _ = await call(run_calls, env, "ls", path="")
    assert message.content.splitlines() == ["README.md", "src/"]
    message, _ = await call(run_calls, env, "glob", pattern="**/*.py")
    assert message.content == "src/app.py"
    message, _ = await call(run_calls, env, "grep", pattern="return", path="src")
    assert message.content == "src/app.py:2:     return 1"
    message, _ = await call(run_calls, env, "grep", pattern="nothing here")
    assert message.status == "success" and "No matches" in message.content
    message, _ = await call(run_calls, env, "grep", pattern="(", regex=True)
    assert message.status == "error" and "invalid regular expression" in message.content
    message, _ = await call(run_calls, env, "ls", path="nope")
    assert message.status == "error" and "no such file" in message.content


async def test_binary_and_non_utf8_files_are_clear_errors(run_calls, tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    backend = FilesystemBackend(tmp_path)
    result = await run_calls(
        backend,
        [
            {"name": "read_file", "args": {"file_path": "blob.bin"}},
            {"name": "read_file", "args": {"file_path": "latin1.txt"}},
            {
                "name": "edit_file",
                "args": {"file_path": "blob.bin", "old_string": "P", "new_string": "Q"},
            },
        ],
    )
    binary, latin, edit = (result["results"][f"call_{i}"] for i in range(3))
    assert binary.status == "error" and "binary file" in binary.content
    assert latin.status == "error" and "not UTF-8" in latin.content
    assert edit.status == "error" and "binary file" in edit.content
    assert (tmp_path / "blob.bin").read_bytes() == b"\x89PNG\r\n\x1a\n\0\0\0"


async def test_huge_file_is_a_clear_error(run_calls, tmp_path: Path) -> None:
    (tmp_path / "huge.log").write_bytes(b"x" * (10 * 1024 * 1024 + 1))
    result = await run_calls(
        FilesystemBackend(tmp_path), [{"name": "read_file", "args": {"file_path": "huge.log"}}]
    )
    message = result["results"]["call_0"]
    assert (
        message.status == "error" and "too large" in message.content and "grep" in message.content
    )


async def test_crlf_files_can_be_edited_as_seen(run_calls, tmp_path: Path) -> None:
    (tmp_path / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    result = await run_calls(
        FilesystemBackend(tmp_path),
        [
            {
                "name": "edit_file",
                "args": {"file_path": "win.txt", "old_string": "one\ntwo", "new_string": "1\n2"},
            }
        ],
    )
    assert result["results"]["call_0"].status == "success"
    assert (tmp_path / "win.txt").read_bytes() == b"1\r\n2\r\n"


async def test_writes_are_atomic_and_keep_permissions(run_calls, tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("echo old\n")
    script.chmod(0o755)
    await run_calls(
        FilesystemBackend(tmp_path),
        [{"name": "write_file", "args": {"file_path": "run.sh", "content": "echo new\n"}}],
    )
    assert script.read_text() == "echo new\n"
    assert script.stat().st_mode & 0o777 == 0o755
    assert [p.name for p in tmp_path.iterdir()] == ["run.sh"]  # no temp files left behind


async def test_absolute_paths_inside_the_workspace_work(run_calls, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hi\n")
    result = await run_calls(
        FilesystemBackend(tmp_path),
        [{"name": "read_file", "args": {"file_path": str(tmp_path / "a.txt")}}],
    )
    assert result["results"]["call_0"].content == "     1\thi"


async def test_execute_is_offered_only_with_a_shell(tmp_path: Path) -> None:
    from deepacp.harness.tools import filesystem_tools

    assert "execute" not in {t.name for t in filesystem_tools(FilesystemBackend(tmp_path))}
    assert "execute" not in {t.name for t in filesystem_tools(StateBackend())}
    assert "execute" in {t.name for t in filesystem_tools(LocalShellBackend(tmp_path))}


async def test_execute_reports_output_and_exit_code(run_calls, tmp_path: Path) -> None:
    result = await run_calls(
        LocalShellBackend(tmp_path),
        [
            {"name": "execute", "args": {"command": "echo hello; echo oops >&2"}},
            {"name": "execute", "args": {"command": "echo failing; exit 3"}},
            {"name": "execute", "args": {"command": "sleep 5", "timeout": 0.3}},
        ],
    )
    ok, failed, slow = (result["results"][f"call_{i}"] for i in range(3))
    assert ok.status == "success" and ok.content == "hello\noops\n[exit code 0]"
    assert failed.status == "error" and failed.content == "failing\n[exit code 3]"
    assert slow.status == "error" and "timed out" in slow.content


def test_temp_files_a_killed_writer_left_are_cleaned_up(tmp_path: Path, monkeypatch) -> None:
    """SIGKILL between writing a temp file and renaming it leaves the temp file; the next
    server's start-up deletes it (and nothing else) from the journal."""
    from deepacp.backends import atomic

    monkeypatch.setattr(atomic, "_journal", None)
    journal, workspace = tmp_path / "writes", tmp_path / "workspace"
    workspace.mkdir()
    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid that no longer runs
    left = workspace / ".app.py.1a2b3c4d.tmp"
    left.write_text("half of the new con")
    precious = workspace / "notes.txt"
    precious.write_text("keep me\n")
    journal.mkdir()
    (journal / f"{dead.pid}-aa").write_text(str(left))
    (journal / f"{dead.pid}-bb").write_text(str(precious))  # not a temp file: never deleted
    (journal / f"{os.getpid()}-cc").write_text(str(workspace / ".live.py.0000.tmp"))
    folder = workspace / ".lib.bin.5e6f7a8b.tmp"  # a temporary folder and the file in it
    folder.mkdir()
    (folder / "lib.bin").write_bytes(b"half")
    (journal / f"{dead.pid}-dd").write_text(str(folder))
    outside = tmp_path / "outside"  # a link named like one: removed, never followed
    outside.mkdir()
    (outside / "mine.txt").write_text("mine\n")
    (workspace / ".trap.tmp").symlink_to(outside)
    (journal / f"{dead.pid}-ee").write_text(str(workspace / ".trap.tmp"))

    atomic.keep_write_journal(journal)
    assert not left.exists() and precious.read_text() == "keep me\n"
    assert not folder.exists() and not (workspace / ".trap.tmp").is_symlink()
    assert (outside / "mine.txt").read_text() == "mine\n"
    assert [p.name for p in journal.iterdir()] == [f"{os.getpid()}-cc"]  # a live writer's

    atomic.replace_file(workspace, "app.py", b"new\n")
    assert (workspace / "app.py").read_text() == "new\n"
    assert not any(p.name.endswith(".tmp") for p in workspace.iterdir())
    assert [p.name for p in journal.iterdir()] == [f"{os.getpid()}-cc"]  # its entry is gone
