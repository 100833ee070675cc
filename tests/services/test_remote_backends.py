"""The remote backend over a real sshd on 127.0.0.1 and in a real Docker container: every
file operation, confinement on the remote, commands in the remote root, and the errors a
user sees when it cannot work."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from deepacp.backends import BackendError, NotFoundError, PathError, ShellCommand
from deepacp.backends.paths import confine
from deepacp.backends.pysearch import not_ignored, walk_files
from deepacp.backends.remote import RemoteBackend
from deepacp.backends.remote_script import Refused
from deepacp.backends.remote_script import confine as remote_confine
from deepacp.backends.runners import DockerRunner, SshRunner, parse_remote
from deepacp.backends.search import GrepMatch, GrepQuery
from deepacp.errors import RemoteUnavailable
from tests.support.docker import DockerBox
from tests.support.sshd import SshServer, ssh_server  # noqa: F401  (fixture)

HOSTILE_NAMES = [
    "with space.txt",
    'it\'s "quoted".txt',
    "$(touch PWNED).txt",
    "`touch PWNED`;x.txt",
    "a;b&&c|d>e.txt",
    "-rf.txt",
]


async def connect(server: SshServer, root: Path) -> RemoteBackend:
    target = parse_remote(server.url(root))
    return await RemoteBackend.connect(target, SshRunner(target, str(server.config)))


@pytest.fixture(params=["ssh", "docker"])
async def remote(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[RemoteBackend]:
    """The workspace `tmp_path/repo` on the other side of each runner."""
    root = tmp_path / "repo"
    root.mkdir()
    if request.param == "ssh":
        backend = await connect(request.getfixturevalue("ssh_server"), root)
    else:
        box: DockerBox = request.getfixturevalue("docker_box")
        for name, value in box.env().items():
            monkeypatch.setenv(name, value)
        backend = await RemoteBackend.connect(parse_remote(box.url(root)))
    yield backend
    await backend.close()


def root_of(backend: RemoteBackend) -> Path:
    return Path(backend.root)


@pytest.mark.parametrize("name", HOSTILE_NAMES)
async def test_every_file_operation_works_on_names_a_shell_would_parse(
    remote: RemoteBackend, name: str
) -> None:
    path = f"dir with space/{name}"
    await remote.write_text(path, "one\ntwo $(id)\n")
    root = root_of(remote)
    assert (root / path).read_text() == "one\ntwo $(id)\n"
    assert [e.path for e in await remote.ls("dir with space")] == [path]
    assert await remote.read_text(path) == "one\ntwo $(id)\n"
    before, after = await remote.edit(path, "two $(id)", "three `id`")
    assert (before, after) == ("one\ntwo $(id)\n", "one\nthree `id`\n")
    assert await remote.glob("**/*.txt") == [path]
    assert await remote.grep(GrepQuery("`id`")) == [GrepMatch(path, 2, "three `id`")]
    await remote.delete(path)
    assert not (root / path).exists()
    assert not list(root.rglob("PWNED")) and not (Path.home() / "PWNED").exists()


async def test_a_file_named_with_a_newline_is_listed_and_refused_like_locally(
    remote: RemoteBackend,
) -> None:
    (root_of(remote) / "new\nline.txt").write_text("x\n")
    assert [e.path for e in await remote.ls()] == ["new\nline.txt"]
    assert await remote.glob("*.txt") == ["new\nline.txt"]
    with pytest.raises(PathError, match="control"):
        await remote.read_text("new\nline.txt")


async def test_a_link_that_leaves_the_root_is_refused_there(
    remote: RemoteBackend, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret\n")
    root = root_of(remote)
    (root / "out").symlink_to(outside)
    (root / "inside.txt").write_text("fine\n")
    (root / "alias.txt").symlink_to(root / "inside.txt")
    for attempt in (
        remote.read_text("out/secret.txt"),
        remote.write_text("out/new.txt", "x"),
        remote.ls("out"),
        remote.grep(GrepQuery("secret", path="out")),
        remote.read_text("../outside/secret.txt"),
        remote.read_text(str(outside / "secret.txt")),
    ):
        with pytest.raises(PathError):
            await attempt
    assert not (outside / "new.txt").exists()
    with pytest.raises(PathError, match="through a symlink"):
        remote.resolved_path("out/secret.txt")
    assert remote.resolved_path("alias.txt") == "inside.txt"
    assert await remote.read_text("alias.txt") == "fine\n"
    await remote.delete("out")  # the link goes, never what it points to
    assert (outside / "secret.txt").exists() and not (root / "out").exists()


async def test_edits_and_reads_keep_the_local_rules(remote: RemoteBackend) -> None:
    root = root_of(remote)
    (root / "a.py").write_text("x = 1\nx = 1\n")
    with pytest.raises(BackendError, match="occurs 2 times"):
        await remote.edit("a.py", "x = 1", "x = 2")
    assert (await remote.edit("a.py", "x = 1", "x = 2", replace_all=True))[1] == "x = 2\nx = 2\n"
    (root / "bin.dat").write_bytes(b"a\0b")
    with pytest.raises(BackendError, match="binary"):
        await remote.read_text("bin.dat")
    with pytest.raises(NotFoundError):
        await remote.read_text("missing.py")
    with pytest.raises(BackendError, match="directory"):
        await remote.read_text("")
    with pytest.raises(BackendError, match="refusing to delete the workspace root"):
        await remote.delete("")
    (root / "full").mkdir()
    (root / "full" / "f").write_text("")
    with pytest.raises(BackendError, match="not empty"):
        await remote.delete("full")
    os.chmod(root / "a.py", 0o754)
    await remote.write_text("a.py", "y = 1\n")
    assert oct((root / "a.py").stat().st_mode & 0o777) == oct(0o754)


async def test_glob_and_grep_follow_gitignore_and_skip_git_and_binaries(
    remote: RemoteBackend,
) -> None:
    root = root_of(remote)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("needle\n")
    (root / ".gitignore").write_text("build/\n*.log\n")
    for name in ("build/out.py", "src/app.py", "src/deep/mod.py", "run.log", "src/keep.txt"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("needle\nNeedle again\n")
    (root / "src" / ".gitignore").write_text("deep/\n")
    (root / "blob.bin").write_bytes(b"needle\0")
    assert await remote.glob("**/*.py") == ["src/app.py"]
    assert await remote.glob("*", "src") == ["src/.gitignore", "src/app.py", "src/keep.txt"]
    found = await remote.grep(GrepQuery("needle"))
    assert [(m.path, m.line) for m in found] == [("src/app.py", 1), ("src/keep.txt", 1)]
    found = await remote.grep(GrepQuery("NEEDLE", ignore_case=True, glob="*.py"))
    assert [(m.path, m.line) for m in found] == [("src/app.py", 1), ("src/app.py", 2)]
    found = await remote.grep(GrepQuery(r"^N\w+ a", regex=True, limit=1))
    assert [(m.path, m.line, m.text) for m in found] == [("src/app.py", 2, "Needle again")]
    with pytest.raises(BackendError, match="invalid regular expression"):
        await remote.grep(GrepQuery("(", regex=True))


async def test_commands_run_in_the_remote_root_and_stop_there_on_timeout(
    remote: RemoteBackend,
) -> None:
    result = await remote.shell.execute(ShellCommand("pwd; echo out; echo err >&2; exit 3"))
    assert result.output == f"{remote.root}\nout\nerr\n" and result.exit_code == 3
    pid_file = root_of(remote) / "pid"
    result = await remote.shell.execute(ShellCommand("sleep 300 & echo $! > pid; wait", timeout=2))
    assert result.timed_out and result.exit_code is None
    # Asked there (the pid is in the remote's namespace); a zombie is gone too: a
    # container's first process need not reap what it inherits.
    pid = int(pid_file.read_text())
    alive = ShellCommand(f"s=$(cut -d' ' -f3 /proc/{pid}/stat 2>/dev/null); echo ${{s:-Z}}")
    for _ in range(200):  # the remote side notices the connection go, then kills the group
        if (await remote.shell.execute(alive)).output.strip() == "Z":
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail("the command's process outlived its timeout on the remote")


async def test_a_command_gets_its_text_as_one_argument(remote: RemoteBackend) -> None:
    command = "printf '%s|' \"$0\" 'a b' \"it's\"; echo"
    assert (await remote.shell.execute(ShellCommand(command))).output == "sh|a b|it's|\n"


async def test_what_a_user_sees_when_the_remote_cannot_be_used(
    ssh_server: SshServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    with pytest.raises(RemoteUnavailable, match="does not exist there") as missing:
        await connect(ssh_server, tmp_path / "nowhere")
    (tmp_path / "file").write_text("")
    with pytest.raises(RemoteUnavailable, match="is not a folder"):
        await connect(ssh_server, tmp_path / "file")
    closed = SshServer(1, ssh_server.user, ssh_server.config)  # nothing listens on port 1
    with pytest.raises(RemoteUnavailable, match=r"cannot reach ssh://.*refused") as refused:
        await connect(closed, tmp_path)
    other_key = tmp_path / "other.conf"
    other_key.write_text(
        ssh_server.config.read_text().replace("user_key", "host_key")  # not authorized
    )
    stranger = SshServer(ssh_server.port, ssh_server.user, other_key)
    with pytest.raises(RemoteUnavailable, match="Permission denied") as denied:
        await connect(stranger, tmp_path)
    for error in (missing, refused, denied):
        assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("ssh://build/srv/repo", ("ssh", "build", "/srv/repo", None, None)),
        ("ssh://me@10.0.0.2:2222/a%20b/", ("ssh", "10.0.0.2", "/a b", "me", 2222)),
        ("docker://dev/work", ("docker", "dev", "/work", None, None)),
    ],
)
def test_remote_urls_name_host_user_port_and_path(url: str, expected: tuple) -> None:
    target = parse_remote(url)
    assert (target.scheme, target.host, target.root, target.user, target.port) == expected


@pytest.mark.parametrize(
    "url",
    [
        "build:/srv/repo",
        "http://host/path",
        "ssh://host",
        "ssh:///path",
        "ssh://-oProxyCommand=x/path",
        "ssh://host:99999/path",
        "ssh://me:secret@host/path",
        "docker://me@box/path",
    ],
)
def test_a_bad_remote_url_is_one_line_saying_what_to_write(url: str) -> None:
    with pytest.raises(RemoteUnavailable, match=r"ssh://\[user@\]host\[:port\]/path") as error:
        parse_remote(url)
    assert "\n" not in str(error.value)


async def test_docker_without_a_daemon_is_a_clear_error() -> None:
    runner = DockerRunner(parse_remote("docker://nosuchbox/work"))
    with pytest.raises(RemoteUnavailable, match="docker") as error:
        await runner.connect()
    assert "\n" not in str(error.value)


def test_the_remote_confinement_agrees_with_the_local_one(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "f").write_text("")
    (tmp_path / "out").mkdir()
    (root / "up").symlink_to(tmp_path / "out")
    (root / "in").symlink_to(root / "sub")
    (root / "loop").symlink_to(root / "loop")
    for rel in ("sub/f", "in/f", "up/x", "loop", "in", "missing/x"):
        for follow in (True, False):
            try:
                local: object = str(confine(root, rel, follow_final=follow))
            except PathError as exc:
                local = "loop" if "loop" in str(exc) else "outside"
            try:
                there: object = remote_confine(str(root), rel, follow_final=follow)
            except Refused as refused:
                there = refused.kind
            assert there == local, (rel, follow)


EMPTY_FILES = [
    "a/x.tmp",
    "a/b/y.tmp",
    "a/b/z.py",
    "build/out.py",
    "src/build/deep.py",
    "keep.log",
    "drop.log",
    "top.txt",
    "src/top.txt",
    "src/app.py",
]


def test_gitignore_rules_applied_to_a_listing_match_the_local_walk(tmp_path: Path) -> None:
    tree = {
        ".gitignore": "*.log\nbuild/\n!keep.log\n/top.txt\n",
        "a/.gitignore": "*.tmp\n!b/\n",
        **dict.fromkeys(EMPTY_FILES, ""),
    }
    for name, text in tree.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    everything = [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()]
    gitignores = {"": tree[".gitignore"], "a": tree["a/.gitignore"]}
    assert sorted(not_ignored(everything, gitignores)) == sorted(walk_files(tmp_path))
