"""Files that turn a later, innocent command into code execution (`.git/config` with
`core.fsmonitor`, a hook, an editor's project settings) are always asked about, in every
mode but yolo and whatever "always allow" was given, by any path or link that reaches them.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.reliability import size

PLANTED = "[core]\n\tfsmonitor = touch pwned\n"


def repo(workspace: Path) -> None:
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / ".git" / "config").write_text("[core]\n\tbare = false\n")
    (workspace / ".git" / "packed-refs").write_text("# pack-refs\n")
    (workspace / ".git" / "ORIG_HEAD").write_text("0" * 40 + "\n")
    (workspace / "sub" / ".git").mkdir(parents=True)
    (workspace / "sub" / ".git" / "config").write_text("[core]\n")
    (workspace / "g").symlink_to(".git")
    (workspace / "src").mkdir()


def attempts(workspace: Path) -> list[tuple[str, dict]]:
    """One target each (a second change of one file in a turn is refused unasked)."""
    write = "write_file"
    return [
        (write, {"file_path": ".git/config", "content": PLANTED}),
        (write, {"file_path": "./.git/description", "content": PLANTED}),
        (write, {"file_path": f"{workspace}/.git/info/exclude", "content": PLANTED}),
        (write, {"file_path": "src/../.git/HEAD", "content": PLANTED}),
        (write, {"file_path": "g/config", "content": PLANTED}),  # the link to .git
        (write, {"file_path": ".git/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}),
        (write, {"file_path": "sub/.git/config", "content": PLANTED}),
        (write, {"file_path": ".git/info/attributes", "content": "* filter=x\n"}),
        (write, {"file_path": ".vscode/tasks.json", "content": "{}"}),
        (write, {"file_path": ".hg/hgrc", "content": "[hooks]\n"}),
        (write, {"file_path": ".deepacp/hooks.json", "content": '{"hooks": []}'}),
        ("edit_file", {"file_path": ".git/packed-refs", "old_string": "#", "new_string": "x"}),
        ("delete", {"file_path": ".git/ORIG_HEAD"}),
    ]


def snapshot(workspace: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(workspace)): p.read_bytes()
        for p in sorted(workspace.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


async def test_code_execution_files_always_ask(agent_factory, tally, tmp_path: Path) -> None:
    t = tally("code-execution files: always asked")
    workspace = tmp_path / "workspace"
    calls = attempts(workspace)
    modes = ["accept-edits", "ask-after-always", "plan"][: size(3, 3)]
    turns = []
    for mode in modes:
        if mode == "ask-after-always":  # the user allowed write_file always, for src/a.py
            args = {"file_path": "src/a.py", "content": "x = 1\n"}
            turns.append({"tool_calls": [{"id": "always", "name": "write_file", "args": args}]})
            turns.append({"content": "made it"})
        batch = [{"id": f"{mode}-{i}", "name": n, "args": a} for i, (n, a) in enumerate(calls)]
        control = {"file_path": f"src/{mode}.py", "content": "ok = True\n"}
        batch.append({"id": f"{mode}-control", "name": "write_file", "args": control})
        turns += [{"tool_calls": batch}, {"content": "done"}]
    yolo = {"file_path": ".git/info/exclude", "content": "*.tmp\n"}
    turns += [{"tool_calls": [{"id": "y", "name": "write_file", "args": yolo}]}, {"content": "ok"}]
    async with agent_factory(turns) as agent:
        repo(agent.workspace)
        session = await agent.new_session()
        for mode in modes:
            before = snapshot(agent.workspace)
            mode_id = "ask" if mode == "ask-after-always" else mode
            await agent.conn.set_session_mode(session_id=session, mode_id=mode_id)
            agent.client.permission_requests.clear()
            if mode == "ask-after-always":
                agent.client.answers = ["allow_always"]
                await agent.prompt(session, "make a.py")
                before = snapshot(agent.workspace)
                agent.client.permission_requests.clear()
            agent.client.answers = ["reject_once"] * len(calls)
            await agent.prompt(session, f"try it in {mode}")
            asked = {r.tool_call.tool_call_id for r in agent.client.permission_requests}
            after = snapshot(agent.workspace)
            for i, (name, args) in enumerate(calls):
                if mode == "plan":  # plan refuses them outright: nothing asked, nothing done
                    continue
                t.record(f"{mode}-{i}" in asked, f"{mode}: {name} {args['file_path']} not asked")
            changed = {k for k in after if before.get(k) != after[k]} | (set(before) - set(after))
            expected = set() if mode == "plan" else {f"src/{mode}.py"}
            t.record(changed == expected, f"{mode}: changed {sorted(changed)}")
            t.record(f"{mode}-control" not in asked, f"{mode}: an ordinary write was asked")
        t.record(not (agent.workspace / "pwned").exists(), "a planted command ran")
        # yolo is the user's explicit "never ask": the list does not override it.
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        agent.client.permission_requests.clear()
        await agent.prompt(session, "ignore tmp files")
        t.record(not agent.client.permission_requests, "yolo asked")
        written = (agent.workspace / ".git/info/exclude").read_text() == "*.tmp\n"
        t.record(written, "yolo did not write")
    t.check()
