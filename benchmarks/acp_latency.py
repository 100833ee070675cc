"""Latency of `deepacp --stdio` where editor users feel it, next to the ACP agents they pick.

    python benchmarks/acp_latency.py [--runs 10] [--peers DIR] [--peer-python PYTHON]

Prints medians of `--runs` runs: spawn -> `initialize` response, spawn -> `session/new`
response, prompt -> first `agent_message_chunk` (cold: first prompt of a fresh process;
warm: the next one), `session/cancel` -> prompt response while `sleep 30` runs and at
each of `CANCEL_MOMENTS` (`--only cancel` runs just these; `--only start` times spawn ->
`initialize` of deepacp and the installed peers in turn, run by run),
`session/load` in a fresh process of a one-turn session, a 500-message and a 5,000-message
one, from what the last load sent (of the one-turn session, also sent `LATE` seconds after
`initialize`), from the saved replay and from the checkpoints (`--only load` runs just
these), and peak RSS: idle after `initialize` and `session/new`
once the harness has loaded (the process stops using CPU), and after the turns; with the
floors under two of them, each in a fresh interpreter: the harness import alone (a prompt
sent right after `session/new` waits for it) and the peak RSS of the libraries alone. Peers are
measured when installed:
`npm install --prefix DIR @zed-industries/claude-agent-acp @zed-industries/codex-acp`
(spawn -> initialize; they need API keys for more; claude-agent-acp's newer releases are
published as `@agentclientprotocol/claude-agent-acp`), and deepagents-acp in the Python given
by --peer-python (`pip install deepagents-acp langchain-openai`; its test agent builds
sessions without calling the model).
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

DEEPACP = [str(Path(sys.executable).parent / "deepacp"), "--stdio"]


class Peer:
    """A JSON-RPC peer on an agent's stdio."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 0
        self.hold_permissions = False
        """Leave permission requests unanswered (kept in `asked`), as a user who has not
        chosen yet; otherwise each is allowed at once."""
        self.asked: list[dict] = []

    @classmethod
    async def spawn(cls, command: list[str], env: dict, cwd: Path) -> Peer:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            limit=2**26,
            start_new_session=True,  # so close() can stop a peer's helper processes too
        )
        return cls(process)

    async def send(self, method: str, params: dict, notify: bool = False) -> int:
        message: dict = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()
        return self.next_id

    async def read(self) -> dict:
        line = await asyncio.wait_for(self.process.stdout.readline(), 60)
        if not line:
            raise RuntimeError("the agent closed its output")
        message = json.loads(line)
        if message.get("method") == "session/request_permission" and self.hold_permissions:
            self.asked.append(message)
        elif message.get("method") == "session/request_permission":
            allow = {"outcome": {"outcome": "selected", "optionId": "allow_once"}}
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": allow}
            self.process.stdin.write(json.dumps(reply).encode() + b"\n")
        return message

    async def response(self, request_id: int) -> dict:
        while True:
            message = await self.read()
            if message.get("id") == request_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(message["error"])
                return message["result"]

    async def request(self, method: str, params: dict) -> dict:
        return await self.response(await self.send(method, params))

    def cpu_ticks(self) -> int:
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime

    def peak_rss_mib(self) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        kib = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM"))
        return kib / 1024

    async def close(self) -> None:
        if self.process.returncode is None:
            self.process.stdin.close()
            try:
                await asyncio.wait_for(self.process.wait(), 5)
            except TimeoutError:
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        await self.process.wait()


INIT = {"protocolVersion": 1, "clientCapabilities": {}}


async def time_start(
    command: list[str], env: dict, cwd: Path, with_session: bool
) -> tuple[float, float | None]:
    started = time.perf_counter()
    peer = await Peer.spawn(command, env, cwd)
    try:
        await peer.request("initialize", INIT)
        initialized = time.perf_counter() - started
        if not with_session:
            return initialized, None
        await peer.request("session/new", {"cwd": str(cwd), "mcpServers": []})
        return initialized, time.perf_counter() - started
    finally:
        await peer.close()


async def idle_rss(env: dict, cwd: Path) -> float:
    """Peak RSS after `initialize` and `session/new`, once the process has been idle (no
    CPU used) for a second: the harness import in the background has ended."""
    peer = await Peer.spawn(DEEPACP, env, cwd)
    try:
        await peer.request("initialize", INIT)
        await peer.request("session/new", {"cwd": str(cwd), "mcpServers": []})
        idle, ticks = 0, peer.cpu_ticks()
        for _ in range(120):
            await asyncio.sleep(0.5)
            idle, ticks = (idle + 1 if peer.cpu_ticks() == ticks else 0), peer.cpu_ticks()
            if idle >= 2:
                break
        return peer.peak_rss_mib()
    finally:
        await peer.close()


FLOOR_PROBE = """
import json, resource, sys, time
from deepacp.acp.lean import import_acp_schema
import_acp_schema()
started = time.perf_counter()
if sys.argv[1] == "harness":
    from deepacp.session.assembly import import_harness; import_harness()
else:
    import langchain.agents
print(json.dumps({"seconds": time.perf_counter() - started,
                  "mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


async def floor(what: str) -> dict[str, float]:
    """In a fresh interpreter, after the lean ACP schema: the time to import the harness
    (`what="harness"`, which a prompt sent right after `session/new` waits for), or the
    peak RSS with LangChain's agents loaded (`"libraries"`, before any code of ours)."""
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", FLOOR_PROBE, what, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await child.communicate()
    return json.loads(out)


def text_prompt(session: str, text: str) -> dict:
    return {"sessionId": session, "prompt": [{"type": "text", "text": text}]}


async def first_chunk(peer: Peer, session: str) -> float:
    started = time.perf_counter()
    request_id = await peer.send("session/prompt", text_prompt(session, "hello"))
    elapsed = None
    while True:
        message = await peer.read()
        update = message.get("params", {}).get("update", {})
        if elapsed is None and update.get("sessionUpdate") == "agent_message_chunk":
            elapsed = time.perf_counter() - started
        if message.get("id") == request_id and "method" not in message:
            return elapsed or float("nan")


async def deepacp_turns(env: dict, cwd: Path) -> dict[str, float]:
    peer = await Peer.spawn(DEEPACP, env, cwd)
    try:
        await peer.request("initialize", INIT)
        session = (await peer.request("session/new", {"cwd": str(cwd), "mcpServers": []}))[
            "sessionId"
        ]
        cold = await first_chunk(peer, session)
        warm = await first_chunk(peer, session)
        await peer.request("session/set_mode", {"sessionId": session, "modeId": "yolo"})
        request_id = await peer.send("session/prompt", text_prompt(session, "run"))
        while True:  # wait until the command runs
            update = (await peer.read()).get("params", {}).get("update", {})
            if (
                update.get("sessionUpdate") == "tool_call_update"
                and update.get("status") == "in_progress"
            ):
                break
        await asyncio.sleep(0.2)
        started = time.perf_counter()
        await peer.send("session/cancel", {"sessionId": session}, notify=True)
        result = await peer.response(request_id)
        cancel = time.perf_counter() - started
        assert result["stopReason"] == "cancelled", result
        return {"cold": cold, "warm": warm, "cancel": cancel, "rss": peer.peak_rss_mib()}
    finally:
        await peer.close()


async def until_update(peer: Peer, kind: str) -> None:
    """Read until a `session/update` of `kind` (or, for "permission", a permission request)."""
    while True:
        message = await peer.read()
        if kind == "permission" and message.get("method") == "session/request_permission":
            return
        if message.get("params", {}).get("update", {}).get("sessionUpdate") == kind:
            return


async def cancelled_after(peer: Peer, session: str, request_id: int) -> float:
    """Seconds from `session/cancel` to the prompt's `cancelled` answer."""
    started = time.perf_counter()
    await peer.send("session/cancel", {"sessionId": session}, notify=True)
    result = await peer.response(request_id)
    assert result["stopReason"] == "cancelled", result
    return time.perf_counter() - started


CANCEL_MOMENTS = {
    "cold": "turn start, cold",
    "build": "turn start, warm",
    "stream": "first model stream",
    "approval": "approval pending",
}
"""Where a cancel lands besides a running command (`deepacp_turns`), each a row: 0.5 s
after the first prompt of a fresh process (the harness still loading); 0.05 s after the
first prompt of a session once the harness is loaded (its agent being built); at the first
streamed chunk; while a permission question waits for the user."""


async def cancel_moments(env: dict, cwd: Path) -> dict[str, float]:
    """`session/cancel` -> the prompt's `cancelled` answer, at each of `CANCEL_MOMENTS`."""
    new = {"cwd": str(cwd), "mcpServers": []}
    took: dict[str, float] = {}
    peer = await Peer.spawn(DEEPACP, env, cwd)
    try:  # the case: the harness still loading, no model call yet
        await peer.request("initialize", INIT)
        session = (await peer.request("session/new", new))["sessionId"]
        request_id = await peer.send("session/prompt", text_prompt(session, "cold start"))
        await asyncio.sleep(0.5)
        took["cold"] = await cancelled_after(peer, session, request_id)
    finally:
        await peer.close()
    peer = await Peer.spawn(DEEPACP, env, cwd)
    try:
        await peer.request("initialize", INIT)
        warm = (await peer.request("session/new", new))["sessionId"]
        await peer.request("session/prompt", text_prompt(warm, "warm up"))
        session = (await peer.request("session/new", new))["sessionId"]  # its graph: not yet
        request_id = await peer.send("session/prompt", text_prompt(session, "build"))
        await asyncio.sleep(0.05)
        took["build"] = await cancelled_after(peer, session, request_id)
        session = (await peer.request("session/new", new))["sessionId"]
        request_id = await peer.send("session/prompt", text_prompt(session, "stream"))
        await until_update(peer, "agent_message_chunk")
        took["stream"] = await cancelled_after(peer, session, request_id)
        session = (await peer.request("session/new", new))["sessionId"]
        peer.hold_permissions = True
        request_id = await peer.send("session/prompt", text_prompt(session, "approve"))
        await until_update(peer, "permission")
        took["approval"] = await cancelled_after(peer, session, request_id)
    finally:
        await peer.close()
    return took


def cancel_script(path: Path) -> Path:
    """A turn for each prompt of `cancel_moments`, taken by the prompt's text."""
    write = {"id": "w", "name": "write_file", "args": {"file_path": "new.txt", "content": "x"}}
    turns = [
        {"content": "started", "when": "cold start"},
        {"content": "ready", "when": "warm up"},
        {"content": "built", "when": "build"},
        {"content": "streamed words " * 400, "delay_ms": 20, "when": "stream"},
        {"tool_calls": [write], "when": "approve"},
    ]
    path.write_text(json.dumps({"turns": turns}))
    return path


def turn_script(path: Path) -> Path:
    turns = [
        {"content": "hi there"},
        {"content": "hello again"},
        {"tool_calls": [{"id": "slow", "name": "execute", "args": {"command": "sleep 30"}}]},
        {"content": "cancelled"},
    ]
    path.write_text(json.dumps({"turns": turns}))
    return path


def long_script(path: Path, tool_turns: int, prompts: int = 1) -> Path:
    """A script of `prompts` prompts, each `tool_turns` tool steps and an answer
    (2 * tool_turns + 2 messages a prompt)."""
    turns = [
        {
            "content": f"step {p}.{i}",
            "tool_calls": [{"id": f"c{p}.{i}", "name": "ls", "args": {"path": ""}}],
        }
        for p in range(prompts)
        for i in range(tool_turns)
    ]
    answers = [{"content": "done"}] * prompts
    per_prompt = [
        [*turns[p * tool_turns : (p + 1) * tool_turns], answers[p]] for p in range(prompts)
    ]
    path.write_text(json.dumps({"turns": [t for prompt in per_prompt for t in prompt]}))
    return path


LOAD_FROM = ("transcript", "replay", "checkpoints")
"""What a fresh process loads a session from: the messages the last load sent
(`deepacp/acp/quickload.py`), the saved replay, or the checkpoints (each removed in turn)."""


LATE = (0.2, 2.0)
"""How long after `initialize` a client that does not load a session at once sends it."""


async def fresh_load(env: dict, cwd: Path, session: str, wait: float = 0.0) -> tuple[float, int]:
    """Seconds from `session/load` to its answer in a fresh process, sent `wait` seconds
    after `initialize` is answered, and how many updates it sent."""
    peer = await Peer.spawn(DEEPACP, env, cwd)
    try:
        await peer.request("initialize", INIT)
        await asyncio.sleep(wait)
        started = time.perf_counter()
        request_id = await peer.send(
            "session/load", {"cwd": str(cwd), "sessionId": session, "mcpServers": []}
        )
        updates = 0
        while True:
            message = await peer.read()
            if message.get("method") == "session/update":
                updates += 1
            elif message.get("id") == request_id:
                return time.perf_counter() - started, updates
    finally:
        await peer.close()


async def time_load(
    env: dict, cwd: Path, runs: int, prompts: int = 1, late: tuple[float, ...] = ()
) -> tuple[dict, int]:
    """Median times of `session/load` in a fresh process, sent once `initialize` is
    answered, from each of `LOAD_FROM` (and from what the last load sent, sent each of
    `late` seconds after), and the updates it replayed, of a session made of `prompts`
    prompts of the script in `env`."""
    peer = await Peer.spawn(DEEPACP, env, cwd)
    try:
        await peer.request("initialize", INIT)
        session = (await peer.request("session/new", {"cwd": str(cwd), "mcpServers": []}))[
            "sessionId"
        ]
        for _ in range(prompts):
            await peer.request("session/prompt", text_prompt(session, "walk"))
    finally:
        await peer.close()
    replays = Path(env["DEEPACP_HOME"]) / "cache" / "replays"
    times: dict[str | float, list[float]] = {source: [] for source in (*LOAD_FROM, *late)}
    updates = 0
    for source in LOAD_FROM * runs:  # each load keeps what the next one reads
        if source != "transcript":
            (replays / f"{session}.load.json").unlink(missing_ok=True)
        if source == "checkpoints":
            (replays / f"{session}.json").unlink(missing_ok=True)
        took, updates = await fresh_load(env, cwd, session)
        times[source].append(took)
    for wait in late:
        times[wait] = [(await fresh_load(env, cwd, session, wait))[0] for _ in range(runs)]
    return {source: statistics.median(t) for source, t in times.items()}, updates


def _median(turns: list[dict[str, float]], key: str) -> float:
    return statistics.median(t[key] for t in turns)


def ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 1000:.0f} ms"


def installed_peers(args: argparse.Namespace) -> list[tuple[str, list[str], bool]]:
    peers: list[tuple[str, list[str], bool]] = []
    bin_dir = args.peers / "node_modules" / ".bin"
    for name in ("claude-agent-acp", "codex-acp"):
        # Prefer a platform's native binary (codex-acp-linux-x64) over its node wrapper.
        found = sorted(bin_dir.glob(f"{name}-*")) or sorted(bin_dir.glob(name))
        if found:
            peers.append((name, [str(found[0])], False))
    if args.peer_python:
        peers.append(("deepagents-acp", [args.peer_python, "-m", "deepagents_acp"], True))
    return peers


async def side_by_side(
    peers: list[tuple[str, list[str], bool]], env: dict, cwd: Path, runs: int
) -> None:
    """Spawn -> `initialize` of deepacp and each peer, taken in turn within each run, so a
    machine's load weighs on all of them alike; prints the medians and deepacp's ratio."""
    commands = [("deepacp", DEEPACP), *((name, command) for name, command, _ in peers)]
    peer_env = {**env, "OPENAI_API_KEY": "sk-benchmark-not-used"}
    took: dict[str, list[float]] = {name: [] for name, _ in commands}
    for _ in range(runs):
        for name, command in commands:
            start = time_start(command, peer_env, cwd, False)
            took[name].append((await asyncio.wait_for(start, 60))[0])
    ours = statistics.median(took["deepacp"])
    print(f"spawn -> initialize, side by side (median of {runs} runs, in turn)")
    for name, values in took.items():
        ratio = "" if name == "deepacp" else f"  deepacp is {ours / statistics.median(values):.2f}x"
        print(f"  {name:20} {ms(statistics.median(values)):>8}{ratio}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--peers", type=Path, default=Path(__file__).parent / "peers")
    parser.add_argument("--peer-python", help="a Python with deepagents-acp installed")
    parser.add_argument(
        "--only",
        choices=["load", "cancel", "start"],
        help="run only the session/load, cancel or side-by-side start-up probes",
    )
    args = parser.parse_args()
    # As pip leaves an installed package: compiled. Else each spawn compiles what it imports
    # (a checkout run with PYTHONDONTWRITEBYTECODE=1 has no byte code to reuse).
    compileall.compile_dir(Path(__file__).parent.parent / "deepacp", quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cwd = root / "workspace"
        cwd.mkdir()
        (cwd / "README.md").write_text("# bench\n")
        env = {**os.environ, "DEEPACP_HOME": str(root / "home")}
        env_turns = {**env, "DEEPACP_MODEL": f"scripted:{turn_script(root / 'turns.json')}"}
        # Prompts of 250 messages each: a prompt's steps stay under the recursion limit.
        long = long_script(root / "long.json", 124, prompts=2)
        env_long = {**env, "DEEPACP_MODEL": f"scripted:{long}"}
        huge = long_script(root / "huge.json", 124, prompts=20)
        env_huge = {**env, "DEEPACP_MODEL": f"scripted:{huge}"}

        if args.only == "start":
            await side_by_side(installed_peers(args), env_turns, cwd, args.runs)
            return
        env_cancel = {**env, "DEEPACP_MODEL": f"scripted:{cancel_script(root / 'cancel.json')}"}
        rows: list[tuple[str, str]] = []
        turns: list[dict[str, float]] = []
        cancels: list[dict[str, float]] = []
        if args.only in (None, "cancel"):
            cancels = [await cancel_moments(env_cancel, cwd) for _ in range(args.runs)]
        if args.only is None:
            starts = [await time_start(DEEPACP, env_turns, cwd, True) for _ in range(args.runs)]
            turns = [await deepacp_turns(env_turns, cwd) for _ in range(args.runs)]
            idle = [await idle_rss(env_turns, cwd) for _ in range(args.runs)]
            harness = [(await floor("harness"))["seconds"] for _ in range(args.runs)]
            libraries = [(await floor("libraries"))["mib"] for _ in range(args.runs)]
            rows += [
                ("spawn -> initialize", ms(statistics.median(s[0] for s in starts))),
                ("spawn -> session/new", ms(statistics.median(s[1] for s in starts))),
                ("prompt -> first chunk (cold process)", ms(_median(turns, "cold"))),
                ("  floor: the harness import alone", ms(statistics.median(harness))),
                ("prompt -> first chunk (warm)", ms(_median(turns, "warm"))),
                ("cancel -> prompt response (sleep 30 running)", ms(_median(turns, "cancel"))),
            ]
        for key, moment in CANCEL_MOMENTS.items() if cancels else ():
            rows.append((f"cancel -> prompt response ({moment})", ms(_median(cancels, key))))
        for label, load_env, prompts in (
            (
                ("one turn", env_turns, 1),
                ("500 messages", env_long, 2),
                ("5,000 messages", env_huge, 20),
            )
            if args.only != "cancel"
            else ()
        ):
            late = LATE if prompts == 1 else ()
            loads, replayed = await time_load(load_env, cwd, args.runs, prompts, late)
            rows.append((f"session/load, {label} ({replayed} updates)", ms(loads["transcript"])))
            for wait in late:
                rows.append((f"  the same, sent {wait:g} s after initialize", ms(loads[wait])))
            rows.append(("  the same, from the saved replay", ms(loads["replay"])))
            rows.append(("  the same, from the checkpoints", ms(loads["checkpoints"])))
        if turns:
            rows.append(("peak RSS idle, harness loaded", f"{statistics.median(idle):.0f} MiB"))
            floor_mib = statistics.median(libraries)
            rows.append(("  floor: ACP schema + langchain.agents alone", f"{floor_mib:.0f} MiB"))
            rows.append(("peak RSS after a turn", f"{_median(turns, 'rss'):.0f} MiB"))
        print(f"deepacp (median of {args.runs} runs)")
        for name, value in rows:
            print(f"  {name:48} {value:>10}")
        if args.only is not None:
            return

        peers = installed_peers(args)
        if not peers:
            print("\nno peers installed (see the module docstring)")
        for name, command, with_session in peers:
            peer_env = {**env, "OPENAI_API_KEY": "sk-benchmark-not-used"}
            try:
                results = [
                    await asyncio.wait_for(time_start(command, peer_env, cwd, with_session), 60)
                    for _ in range(args.runs)
                ]
            except (TimeoutError, RuntimeError) as exc:
                print(f"\n{name}: no usable answer ({type(exc).__name__}: {exc})")
                continue
            init = statistics.median(r[0] for r in results)
            new = statistics.median(r[1] for r in results) if with_session else None
            print(f"\n{name}: spawn -> initialize {ms(init)}, spawn -> session/new {ms(new)}")


if __name__ == "__main__":
    asyncio.run(main())
