"""Code actions that start an edit: instruction comments in any comment syntax, and "fix
this" for another tool's problems."""

import pytest
from lsprotocol import types as T

from deepacp.lsp.arguments import EDIT
from deepacp.lsp.offers import fix_actions, instruction_actions

URI = "file:///w/app.py"


def lines(first: int, last: int) -> T.Range:
    return T.Range(T.Position(first, 0), T.Position(last, 0))


@pytest.mark.parametrize(
    "comment",
    [
        "# deepacp: make it async",
        "    // deepacp: make it async",
        "-- deepacp: make it async",
        "; deepacp:make it async  ",
        "/* deepacp: make it async */",
        "<!-- deepacp: make it async -->",
        " * deepacp: make it async",
    ],
)
def test_an_instruction_comment_offers_that_edit(comment: str) -> None:
    [action] = instruction_actions(URI, ["x = 1", comment, "y = 2"], lines(1, 1))
    assert action.title == "deepacp: make it async"
    assert action.command.command == EDIT
    assert action.command.arguments == [
        {
            "uri": URI,
            "instruction": "make it async",
            "range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}},
        }
    ]


def test_only_instructions_on_the_selected_lines_are_offered() -> None:
    text = ["# deepacp: first", "code", "# deepacp: second", "# deepacp talk, not an instruction"]
    assert [a.title for a in instruction_actions(URI, text, lines(1, 2))] == ["deepacp: second"]
    assert [a.title for a in instruction_actions(URI, text, lines(0, 99))] == [
        "deepacp: first",
        "deepacp: second",
    ]
    assert instruction_actions(URI, text, lines(3, 3)) == []
    assert instruction_actions(URI, [], lines(0, 0)) == []  # an empty document


def test_another_tools_problem_offers_a_fix_and_deepacps_own_hints_do_not() -> None:
    problem = T.Diagnostic(lines(0, 1), "'os' imported but unused", source="ruff")
    hint = T.Diagnostic(lines(2, 3), "deepacp proposes: x", source="deepacp")
    [fix] = fix_actions(URI, [problem, hint])
    assert fix.title == "deepacp: fix this" and fix.diagnostics == [problem]
    [arguments] = fix.command.arguments
    assert arguments["instruction"] == "Fix this problem: 'os' imported but unused"
    assert arguments["range"]["end"] == {"line": 1, "character": 0}
