"""deepacp.edit's arguments: a bad request is refused in plain words, naming the field."""

from pathlib import Path

import pytest

from deepacp.lsp.arguments import BadRequest, EditArgs, edit_target, parse_edit_args

URI = "file:///w/calc.py"


def refusal(*arguments, last_uri=None) -> str:
    with pytest.raises(BadRequest) as caught:
        parse_edit_args(arguments, last_uri)
    return str(caught.value)


def test_a_well_formed_request_is_typed() -> None:
    args = parse_edit_args(
        (
            {
                "uri": URI,
                "instruction": " tidy ",
                "range": {"start": {"line": 1, "character": 0}, "end": {"line": 3, "character": 0}},
            },
        ),
        None,
    )
    assert args.uri == URI and args.instruction == "tidy"
    assert (args.range.start.line, args.range.end.line) == (1, 3)
    assert parse_edit_args(("tidy", "it"), URI) == EditArgs(URI, "tidy it")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (({"uri": URI},), "deepacp.edit: 'instruction' is missing: say what to change, as text"),
        (
            ({"uri": URI, "instruction": ""},),
            "deepacp.edit: the instruction is empty; say what to change",
        ),
        (
            ({"uri": URI, "instruction": 42},),
            "'instruction' must be text saying what to change, not a number",
        ),
        (({"uri": URI, "instruction": ["a"]},), "not a list"),
        (
            ({"instruction": "tidy"},),
            "deepacp.edit: 'uri' is missing: the file:// URI of the file to change",
        ),
        (({"uri": 3, "instruction": "tidy"},), "'uri' must be text (a file:// URI), not a number"),
        (
            (
                {
                    "uri": URI,
                    "instruction": "x",
                    "range": {
                        "start": {"line": -1, "character": 0},
                        "end": {"line": 0, "character": 0},
                    },
                },
            ),
            "'range' must be",
        ),
        (
            ({"uri": URI, "instruction": "x", "scope": "all"},),
            "unknown field 'scope'; it takes uri, instruction, range",
        ),
        (
            (42,),
            "deepacp.edit takes {uri, instruction, range?} or an instruction as text; got a number",
        ),
        ((), "got no arguments"),
        (("   ",), "the instruction is empty"),
    ],
)
def test_a_bad_request_names_what_is_wrong(arguments: tuple, message: str) -> None:
    assert message in refusal(*arguments, last_uri=URI)


def test_an_instruction_alone_needs_a_document_to_be_about() -> None:
    assert "open the file the instruction is about first" in refusal("tidy")


def test_the_target_must_be_an_existing_or_open_file_in_the_workspace(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / "calc.py").write_text("x = 1\n")
    never_open = lambda path: False  # noqa: E731
    assert edit_target((root / "calc.py").as_uri(), [root], never_open) == (root / "calc.py", root)
    with pytest.raises(
        BadRequest, match=f"{tmp_path / 'other.py'} is outside the workspace {root}"
    ):
        edit_target((tmp_path / "other.py").as_uri(), [root], never_open)
    with pytest.raises(BadRequest, match=rf"new.py does not exist .*\(workspace {root}\)"):
        edit_target((root / "new.py").as_uri(), [root], never_open)
    # A file that exists only as an open buffer can be edited.
    assert edit_target((root / "new.py").as_uri(), [root], lambda p: True)[0] == root / "new.py"
    with pytest.raises(BadRequest, match="must be a file:// URI"):
        edit_target("untitled:Untitled-1", [root], never_open)
    # With no workspace folders, the file's own folder is the workspace.
    assert edit_target((tmp_path / "elsewhere.py").as_uri(), [], lambda p: True)[1] == tmp_path
