"""What counts as a tool loop."""

from deepacp.harness.middleware.tool_loops import loop_of


def call(name: str, **args) -> dict:
    return {"name": name, "args": args, "id": "x"}


def test_the_same_call_counts_only_in_a_row():
    ls = call("ls", path=".")
    assert loop_of([ls], ls) is None
    assert loop_of([ls, ls], ls) == 'the same call 3 times in a row: ls {"path": "."}'
    assert loop_of([ls, call("ls", path="src"), ls], ls) is None
    assert loop_of([ls, ls], call("ls", path="src")) is None


def test_polling_a_background_task_is_no_loop():
    check = call("check_background_task", task_id="t1")
    assert loop_of([check] * 10, check) is None


def test_a_change_made_again_after_it_was_undone_is_a_loop():
    do = call("edit_file", file_path="a.py", old_string="1", new_string="2")
    undo = call("edit_file", file_path="a.py", old_string="2", new_string="1")
    assert loop_of([do, undo], do) is not None
    elsewhere = call("edit_file", file_path="b.py", old_string="2", new_string="1")
    assert loop_of([do, elsewhere], do) is None  # a.py was not changed in between
    assert loop_of([do], call("write_file", file_path="a.py", content="")) is None
    write = call("write_file", file_path="a.py", content="v1")
    other = call("write_file", file_path="a.py", content="v2")
    assert loop_of([write, other], write) is not None
