from pathlib import Path

import pytest

from deepacp.backends.paths import PathError, clean_path, confine, to_workspace_path


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("", ""),
        (".", ""),
        ("src/app.py", "src/app.py"),
        ("./src//app.py", "src/app.py"),
        ("src/../README.md", "README.md"),
        ("/work/proj/src/app.py", "src/app.py"),
        ("/work/proj", ""),
        ("/work/proj/", ""),
    ],
)
def test_workspace_paths(given: str, expected: str) -> None:
    assert to_workspace_path(given, "/work/proj") == expected


@pytest.mark.parametrize(
    "hostile",
    [
        "../x",
        "..",
        "a/../../x",
        "/work/projx/a",
        "/work",
        "/etc/passwd",
        "a\x00b",
        "a\\b",
        "~/x",
        "\uff0e\uff0e/x",
        "a\u2215b",
        "a\u200bb",
        "x" * 5000,
    ],
)
def test_hostile_paths_are_refused(hostile: str) -> None:
    with pytest.raises(PathError):
        to_workspace_path(hostile, "/work/proj")


def test_clean_path_keeps_absolute_marker() -> None:
    assert clean_path("//a/../b") == "/b"
    assert clean_path("/large_tool_results/x") == "/large_tool_results/x"


def test_confine_follows_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "inside.txt").write_text("ok")
    (root / "good").symlink_to(root / "inside.txt")
    (root / "bad").symlink_to(tmp_path)
    assert confine(root, "good") == root / "inside.txt"
    with pytest.raises(PathError):
        confine(root, "bad/anything")
    # Without following the last segment, the link itself is what is addressed.
    assert confine(root, "bad", follow_final=False) == root / "bad"
