import pytest

from deepacp.session.turns.approvals import ApprovalPolicy, permission_options


@pytest.mark.parametrize(
    ("mode", "tool", "gated"),
    [
        ("ask", "edit_file", True),
        ("ask", "execute", True),
        ("ask", "read_file", False),
        ("accept-edits", "write_file", False),
        ("accept-edits", "execute", True),
        ("yolo", "execute", False),
        ("yolo", "delete", False),
        ("plan", "grep", False),
    ],
)
def test_modes_gate_the_right_tools(mode: str, tool: str, gated: bool) -> None:
    assert ApprovalPolicy(mode=mode).needs_approval("c1", tool, {"command": "ls"}) is gated


def test_always_allow_a_command_covers_exactly_that_command() -> None:
    policy = ApprovalPolicy()
    policy.remember("execute", {"command": "make test"}, "allow_always")
    assert not policy.needs_approval("a", "execute", {"command": "make test"})
    assert policy.needs_approval("b", "execute", {"command": "make test && rm -rf /"})
    assert policy.needs_approval("c", "edit_file", {"file_path": "x"})


def test_always_reject_is_answered_without_asking() -> None:
    policy = ApprovalPolicy(mode="yolo")
    policy.remember("delete", {"file_path": "a"}, "reject_always")
    assert policy.needs_approval("d", "delete", {"file_path": "b"})  # even in yolo
    assert policy.preset_answer("delete", {"file_path": "b"}) == "reject_always"
    policy.remember("delete", {}, "allow_always")
    assert policy.preset_answer("delete", {}) is None


def test_a_question_once_asked_stays_asked_across_a_mode_switch() -> None:
    policy = ApprovalPolicy(mode="ask")
    assert policy.needs_approval("call", "execute", {"command": "rm x"})
    policy.mode = "yolo"  # switched while the question is open
    assert policy.needs_approval("call", "execute", {"command": "rm x"})
    assert not policy.needs_approval("other", "execute", {"command": "rm x"})


def test_permission_options_follow_allowed_decisions() -> None:
    assert permission_options(["approve", "reject"]) == (
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    )
    assert permission_options(["approve"]) == ("allow_once", "allow_always")
    assert permission_options(["reject", "respond"]) == ("reject_once", "reject_always")


def test_plan_mode_outranks_always_allow() -> None:
    """A sub-agent has no plan-mode middleware: the gate is what stops its edits."""
    policy = ApprovalPolicy()
    policy.remember("write_file", {"file_path": "a"}, "allow_always")
    policy.remember("execute", {"command": "make"}, "allow_always")
    policy.mode = "plan"
    assert policy.needs_approval("w", "write_file", {"file_path": "b"})
    assert policy.needs_approval("x", "execute", {"command": "make"})


@pytest.mark.parametrize(
    ("mode", "sandbox", "args", "gated"),
    [
        ("accept-edits", "workspace-write", {}, False),
        ("accept-edits", "workspace-write+network", {}, True),
        ("accept-edits", "read-only", {}, True),
        ("accept-edits", "off", {}, True),
        ("ask", "workspace-write", {}, True),
        ("accept-edits", "workspace-write", {"outside_sandbox": True}, True),
        ("accept-edits", "workspace-write", {"outside_sandbox": "yes"}, True),
        ("yolo", "workspace-write", {"outside_sandbox": True}, True),
        ("yolo", "off", {"outside_sandbox": True}, False),
    ],
)
def test_commands_are_asked_by_what_the_sandbox_leaves_open(
    mode: str, sandbox: str, args: dict, gated: bool
) -> None:
    policy = ApprovalPolicy(mode=mode, sandbox=lambda: sandbox)
    assert policy.needs_approval("c", "execute", {"command": "make", **args}) is gated


def test_no_always_allow_covers_running_outside_the_sandbox() -> None:
    policy = ApprovalPolicy(sandbox=lambda: "workspace-write")
    escape = {"command": "make", "outside_sandbox": True}
    policy.remember("execute", {"command": "make"}, "allow_always")
    policy.remember("execute", escape, "allow_always")
    assert not policy.needs_approval("a", "execute", {"command": "make"})
    assert policy.needs_approval("b", "execute", escape)


def test_what_the_guard_could_not_undo_makes_the_next_command_ask() -> None:
    policy = ApprovalPolicy(mode="accept-edits", sandbox=lambda: "workspace-write")
    policy.remember("execute", {"command": "make"}, "allow_always")
    assert not policy.needs_approval("a", "execute", {"command": "ls"})
    policy.breach.record(".vscode (Permission denied)")
    assert not policy.needs_approval("w", "write_file", {"file_path": "x.py"})
    assert policy.needs_approval("b", "execute", {"command": "make"})  # "always" too
    assert not policy.needs_approval("c", "execute", {"command": "ls"})  # once
    policy.mode = "yolo"
    policy.breach.record(".vscode (Permission denied)")
    assert not policy.needs_approval("d", "execute", {"command": "ls"})
