"""Attack: background tasks that hold every command slot, outlive the turn the user
cancelled, or keep writing after the user took back the turn that started them — with
writes no restore point kept. Over `deepacp --stdio`, with a scripted model whose
children run real commands in yolo mode, sandboxed, as root and as an ordinary user
(`runner`)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.test_sandbox import Host, card_text, hosted
from tests.support.folders import var_tmp
from tests.support.users import Runner
from tests.support.waits import marked, marked_pids, wait_for

pytestmark = pytest.mark.services  # bubblewrap, as root and as an ordinary user

MARK = f"deepacp-bg-bounds-{uuid.uuid4().hex[:12]}"  # this process's: the tests run side by side


def call(call_id: str, name: str, **args) -> dict:
    return {"id": call_id, "name": name, "args": args}


def start(call_id: str, brief: str) -> dict:
    return call(
        call_id, "start_background_task", description=brief, subagent_type="general-purpose"
    )


def sleeping(tag: str) -> str:
    """A command that runs a minute, found among the processes by `tag` (`running`)."""
    return marked("sleep 60", f"{MARK}-{tag}")


def running(tags: list[str]) -> list[str]:
    """The tags of the `sleeping` commands running now."""
    return [tag for tag in tags if marked_pids(f"{MARK}-{tag}")]


@pytest.fixture
def gate() -> Iterator[Path]:
    """A folder a sandboxed command can see (not the host's /tmp) but not write: the test
    opens `go` in it when a task may go on."""
    with var_tmp("deepacp-gate-", 0o755) as folder:
        yield folder


@pytest.fixture
def host(runner: Runner) -> Iterator[Host]:
    with hosted(runner) as made:
        yield made


async def test_tasks_are_bounded_and_leave_a_foreground_command_its_slots(host: Host) -> None:
    briefs = [f"BG-{n}: sleep twice" for n in range(1, 9)]
    tags = [f"{n}{half}" for n in range(1, 9) for half in "ab"]
    children = []
    for n, brief in enumerate(briefs, 1):
        two = [call(f"x{n}a", "execute", command=sleeping(f"{n}a"))]
        two.append(call(f"x{n}b", "execute", command=sleeping(f"{n}b")))
        children += [{"when": brief, "tool_calls": two}, {"when": brief, "content": "slept"}]
    turns = [
        {"tool_calls": [start(f"s{n}", brief) for n, brief in enumerate(briefs, 1)]},
        {"content": "Started what I could."},
        {"tool_calls": [call("e1", "execute", command="echo foreground")]},
        {"content": "The echo ran."},
        *children,
    ]
    async with host.start(turns) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        await agent.prompt(session, "start eight")
        cards = agent.client.cards()
        said = [card_text(cards[f"s{n}"]) for n in range(1, 9)]
        started = [s for s in said if s.startswith("Started background task")]
        refused = [s for s in said if "4 background tasks are running" in s]
        assert len(started) == 4 and len(refused) == 4, said
        await wait_for(lambda: len(running(tags)) >= 4, timeout=30)

        # The tasks' eight commands hold at most their share of the slots: the echo runs.
        response = await asyncio.wait_for(agent.prompt(session, "now echo"), timeout=45)
        assert response.stop_reason == "end_turn"
        assert "foreground" in card_text(agent.client.cards()["e1"])
        assert len(running(tags)) == 4  # the tasks' share, still sleeping


async def test_cancel_stops_the_tasks_of_the_cancelled_turn_only(host: Host) -> None:
    turns = [
        {"tool_calls": [start("s1", "BG-1: sleep")]},
        {"content": "Started one."},
        {"tool_calls": [start("s2", "BG-2: sleep")]},
        {"tool_calls": [call("x1", "execute", command=sleeping("turn"))]},
        {"content": "never reached: cancelled"},
        {"when": "BG-1", "tool_calls": [call("c1", "execute", command=sleeping("earlier"))]},
        {"when": "BG-1", "content": "slept"},
        {"when": "BG-2", "tool_calls": [call("c2", "execute", command=sleeping("cancelled"))]},
        {"when": "BG-2", "content": "slept"},
    ]
    async with host.start(turns) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        await agent.prompt(session, "start one")
        second = asyncio.ensure_future(agent.prompt(session, "start another, then sleep"))
        tags = ["earlier", "cancelled", "turn"]
        await wait_for(lambda: running(tags) == tags, timeout=30)
        await agent.conn.cancel(session_id=session)
        assert (await second).stop_reason == "cancelled"
        await wait_for(lambda: running(tags) == ["earlier"], timeout=15)
        said = "Started background task bg-s2; stopped: the turn that started it was cancelled."
        await wait_for(lambda: card_text(agent.client.cards()["s2"]) == said)  # as it arrives
        assert "stopped" not in card_text(agent.client.cards()["s1"])


async def test_a_rewind_past_its_turn_stops_a_task_and_undoes_its_writes(
    host: Host, gate: Path
) -> None:
    wait = f"while [ ! -e {gate}/go ]; do sleep 0.05; done"
    brief = "BG-1: wait, then write"
    turns = [
        {"tool_calls": [start("s1", brief)]},
        {"content": "Started it."},
        {"when": brief, "tool_calls": [call("w0", "execute", command=wait)]},
        {
            "when": brief,
            "tool_calls": [
                call("w1", "write_file", file_path="notes.txt", content="from the task\n"),
                call("w2", "edit_file", file_path="a.py", old_string="x = 1", new_string="x = 666"),
                call("w3", "execute", command="echo made > made.txt"),
            ],
        },
        {"when": brief, "tool_calls": [call("w4", "execute", command=sleeping("rewound"))]},
        {"when": brief, "content": "never reached: stopped"},
    ]
    (host.workspace / "a.py").write_text("x = 1\n")
    async with host.start(turns) as agent:
        session = await agent.new_session()
        await agent.conn.set_session_mode(session_id=session, mode_id="yolo")
        await agent.prompt(session, "start it")
        (gate / "go").touch()  # the turn has ended: what the task does now is between turns
        await wait_for(lambda: running(["rewound"]) == ["rewound"], timeout=30)
        assert (agent.workspace / "notes.txt").read_text() == "from the task\n"
        assert (agent.workspace / "made.txt").read_text() == "made\n"

        await agent.prompt(session, "/undo")
        said = agent.client.text()
        assert (agent.workspace / "a.py").read_text() == "x = 1\n", said
        assert not (agent.workspace / "notes.txt").exists(), said
        assert not (agent.workspace / "made.txt").exists(), said
        await wait_for(lambda: not running(["rewound"]), timeout=15)
        notice = "Stopped background task bg-s1: the turn that started it was taken back"
        await wait_for(lambda: notice in agent.client.text())
        await wait_for(lambda: "stopped" in card_text(agent.client.cards()["s1"]))
