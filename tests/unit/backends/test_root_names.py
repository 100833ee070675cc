"""A workspace root known by two names (as given, through a link, and resolved): one
function turns a path under either into the same workspace path, for every backend."""

from pathlib import Path

import pytest

from deepacp.backends.filesystem import FilesystemBackend
from deepacp.backends.paths import PathError, to_workspace_path


def test_either_name_of_the_root_gives_the_same_workspace_path() -> None:
    roots = ("/home/me/proj", "/data/me/proj")
    assert to_workspace_path("/home/me/proj/src/a.py", *roots) == "src/a.py"
    assert to_workspace_path("/data/me/proj/src/a.py", *roots) == "src/a.py"
    assert to_workspace_path("/data/me/proj", *roots) == ""
    with pytest.raises(PathError, match=r"outside the workspace \(/data/me/proj\)"):
        to_workspace_path("/home/me/other/a.py", *roots)
    with pytest.raises(PathError, match="outside the workspace"):
        to_workspace_path("/home/me/project/a.py", *roots)  # a sibling sharing the prefix


def test_a_backend_over_a_linked_root_takes_paths_under_both_names(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "src").mkdir(parents=True)
    (tmp_path / "link").symlink_to(real)
    backend = FilesystemBackend(tmp_path / "link")
    assert backend.workspace_path(str(tmp_path / "link" / "src" / "a.py")) == "src/a.py"
    assert backend.workspace_path(str(real / "src" / "a.py")) == "src/a.py"
    with pytest.raises(PathError, match="outside the workspace"):
        backend.workspace_path(str(tmp_path / "elsewhere.py"))
