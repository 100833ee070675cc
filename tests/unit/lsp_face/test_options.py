"""What the client says at initialize: options (a bad one is reported, the defaults stand)
and the workspace folders."""

from pathlib import Path

from lsprotocol import types as T

from deepacp.lsp.options import LspOptions, read_options, workspace_roots


def test_options_are_typed() -> None:
    options, problems = read_options(
        {"model": "scripted:x.json", "shell": "deny", "review": "lens"}
    )
    assert options == LspOptions(model="scripted:x.json", shell="deny", review="lens")
    assert problems == []
    assert read_options(None) == (LspOptions(), [])
    assert read_options(["not", "an", "object"]) == (LspOptions(), [])


def test_a_bad_or_unknown_option_is_reported_and_the_defaults_stand() -> None:
    options, problems = read_options({"shell": "sometimes", "theme": "dark", "color": 1})
    assert options == LspOptions()
    [bad, unknown] = problems
    assert bad.startswith("bad initializationOptions: ")
    assert unknown == "unknown initializationOptions: color, theme"
    options, problems = read_options({"review": "annotated", "extra": True})
    assert options.review == "annotated"
    assert problems == ["unknown initializationOptions: extra"]


def test_the_workspace_is_its_folders_else_the_root(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    folders = [T.WorkspaceFolder(a.as_uri(), "a"), T.WorkspaceFolder(b.as_uri(), "b")]
    caps = T.ClientCapabilities()
    both = T.InitializeParams(caps, root_uri=tmp_path.as_uri(), workspace_folders=folders)
    assert workspace_roots(both) == [a, b]
    assert workspace_roots(T.InitializeParams(caps, root_uri=a.as_uri())) == [a]
    assert workspace_roots(T.InitializeParams(caps)) == []
    assert workspace_roots(T.InitializeParams(caps, root_uri="untitled:x")) == []
