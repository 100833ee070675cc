"""Billed input tokens of one 40-call agent session, with prompt caching on and off.

    python benchmarks/token_cost.py

The real ChatAnthropic drives deepacp's harness (file tools, a shell, memory, planning)
through the local Anthropic Messages server in tests/providers, whose cache accounting
follows Anthropic's documented rules (prefix hits, minimum cacheable length, 5-minute
lifetime; its clock advances 20 s per call here, with one 6-minute break that lets the
cache expire). The session — reads, searches, edits, commands over several user turns —
runs twice, the same script each time. Per call it prints the input split (uncached /
cache write / cache read) and the billed-input equivalent (reads 0.1x, writes 1.25x) with
caching on, and the billed input with caching off; then the ratio (target: <= 0.3).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langgraph.checkpoint.memory import InMemorySaver

from deepacp.backends import LocalShellBackend
from deepacp.harness import create_deep_agent
from tests.providers.anthropic_server import AnthropicServer
from tests.providers.wire import Reply, ToolCall

READ_PRICE, WRITE_PRICE = 0.1, 1.25
SECONDS_PER_CALL = 20.0
BREAK_BEFORE_TURN = 4
BREAK_SECONDS = 360.0
TARGET = 0.3

MODULE = "\n".join(
    f"def step_{i}(value):\n    '''Step {i} of the pipeline.'''\n    return value + {i}\n"
    for i in range(40)
)


def call(name: str, **args: Any) -> ToolCall:
    return ToolCall(name, args)


def session_script() -> list[tuple[str, list[Reply]]]:
    """User turns, each with the model's replies: 40 model calls in all."""
    read = lambda path: call("read_file", file_path=path)  # noqa: E731
    run = lambda command: call("execute", command=command)  # noqa: E731

    def edit(path: str, old: str, new: str) -> ToolCall:
        return call("edit_file", file_path=path, old_string=old, new_string=new)

    return [
        (
            "Look around this project and tell me what it does.",
            [
                Reply("Listing the project.", tool_calls=[call("ls", path=".")]),
                Reply("Reading the readme.", tool_calls=[read("README.md")]),
                Reply("Reading the module.", tool_calls=[read("pipeline.py")]),
                Reply("Finding the tests.", tool_calls=[call("glob", pattern="**/*.py")]),
                Reply("Reading the tests.", tool_calls=[read("test_pipeline.py")]),
                Reply("It is a forty-step numeric pipeline with one test."),
            ],
        ),
        (
            "Run the tests.",
            [
                Reply("Running them.", tool_calls=[run("python -m unittest -q test_pipeline")]),
                Reply("Checking the interpreter.", tool_calls=[run("python --version")]),
                Reply(
                    "Trying one step.",
                    tool_calls=[run("python -c 'import pipeline; print(pipeline.step_1(1))'")],
                ),
                Reply("The test passes; step_1(1) is 2."),
            ],
        ),
        (
            "Make step_3 and step_7 double their input instead.",
            [
                Reply("Finding them.", tool_calls=[call("grep", pattern="def step_[37]\\b")]),
                Reply(
                    "Changing step_3.",
                    tool_calls=[edit("pipeline.py", "return value + 3\n", "return value * 2\n")],
                ),
                Reply(
                    "Changing step_7.",
                    tool_calls=[edit("pipeline.py", "return value + 7\n", "return value * 2\n")],
                ),
                Reply("Reading the result.", tool_calls=[read("pipeline.py")]),
                Reply("Running the tests.", tool_calls=[run("python -m unittest -q")]),
                Reply("Both steps now double their input; the tests still pass."),
            ],
        ),
        (
            "Add a test for step_3.",
            [
                Reply("Reading the tests.", tool_calls=[read("test_pipeline.py")]),
                Reply(
                    "Adding it.",
                    tool_calls=[
                        edit(
                            "test_pipeline.py",
                            "if __name__",
                            "class StepThree(unittest.TestCase):\n"
                            "    def test_doubles(self):\n"
                            "        self.assertEqual(pipeline.step_3(4), 8)\n\n\n"
                            "if __name__",
                        )
                    ],
                ),
                Reply("Running it.", tool_calls=[run("python -m unittest -q")]),
                Reply("Added StepThree.test_doubles; it passes."),
            ],
        ),
        (
            "Write a CHANGES.md entry and note our test command in AGENTS.md.",
            [
                Reply(
                    "Writing the entry.",
                    tool_calls=[
                        call(
                            "write_file",
                            file_path="CHANGES.md",
                            content="# Changes\n\n- step_3 and step_7 double their input.\n",
                        )
                    ],
                ),
                Reply("Reading memory.", tool_calls=[read("AGENTS.md")]),
                Reply(
                    "Noting the command.",
                    tool_calls=[
                        edit(
                            "AGENTS.md",
                            "Use four spaces.",
                            "Use four spaces.\nRun the tests with python -m unittest.",
                        )
                    ],
                ),
                Reply("Done: CHANGES.md written, AGENTS.md notes the test command."),
            ],
        ),
        (
            "Plan the next refactor: merge the add-steps into one function.",
            [
                Reply(
                    "Planning.",
                    tool_calls=[
                        call(
                            "write_todos",
                            todos=[
                                {"content": "Find every add-step", "status": "in_progress"},
                                {"content": "Write add_n(value, n)", "status": "pending"},
                                {"content": "Replace the steps", "status": "pending"},
                            ],
                        )
                    ],
                ),
                Reply("Counting them.", tool_calls=[run("grep -c 'return value +' pipeline.py")]),
                Reply("Reading the module again.", tool_calls=[read("pipeline.py")]),
                Reply(
                    "Updating the plan.",
                    tool_calls=[
                        call(
                            "write_todos",
                            todos=[
                                {"content": "Find every add-step", "status": "completed"},
                                {"content": "Write add_n(value, n)", "status": "pending"},
                                {"content": "Replace the steps", "status": "pending"},
                            ],
                        )
                    ],
                ),
                Reply("38 add-steps can become add_n(value, n); the plan is in the todo list."),
            ],
        ),
        (
            "Start: write add_n and use it for step_0.",
            [
                Reply(
                    "Adding add_n.",
                    tool_calls=[
                        edit(
                            "pipeline.py",
                            "def step_0(value):",
                            "def add_n(value, n):\n    return value + n\n\n\ndef step_0(value):",
                        )
                    ],
                ),
                Reply(
                    "Using it.",
                    tool_calls=[
                        edit("pipeline.py", "return value + 0\n", "return add_n(value, 0)\n")
                    ],
                ),
                Reply("Testing.", tool_calls=[run("python -m unittest -q")]),
                Reply("Showing the diff.", tool_calls=[run("git diff --stat || true")]),
                Reply("Checking imports.", tool_calls=[call("grep", pattern="^import")]),
                Reply("Rereading.", tool_calls=[read("pipeline.py")]),
                Reply("add_n exists and step_0 uses it; tests pass."),
            ],
        ),
        (
            "Thanks. Summarize today's changes.",
            [
                Reply("Reading the changelog.", tool_calls=[read("CHANGES.md")]),
                Reply("Listing the files.", tool_calls=[call("ls", path=".")]),
                Reply("Checking the tests.", tool_calls=[run("python -m unittest -q")]),
                Reply(
                    "Today: step_3 and step_7 double, a test for step_3, add_n for step_0, "
                    "a changelog and a memory note."
                ),
            ],
        ),
    ]


def make_workspace() -> Path:
    root = Path(tempfile.mkdtemp(prefix="token-cost-"))
    (root / "README.md").write_text("# pipeline\n\nForty small steps applied in order.\n")
    (root / "pipeline.py").write_text(MODULE)
    (root / "test_pipeline.py").write_text(
        "import unittest\n\nimport pipeline\n\n\nclass Steps(unittest.TestCase):\n"
        "    def test_step_1(self):\n        self.assertEqual(pipeline.step_1(1), 2)\n\n\n"
        "if __name__ == '__main__':\n    unittest.main()\n"
    )
    (root / "AGENTS.md").write_text("Use four spaces.\n")
    return root


@dataclass
class Call:
    uncached: int
    written: int
    read: int

    @property
    def total(self) -> int:
        return self.uncached + self.written + self.read

    @property
    def billed(self) -> float:
        return self.uncached + WRITE_PRICE * self.written + READ_PRICE * self.read


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def labels() -> list[str]:
    """What each call answered with: its tool, or the turn's final answer."""
    return [
        r.tool_calls[0].name if r.tool_calls else "answer"
        for _, replies in session_script()
        for r in replies
    ]


async def run_session(caching: bool) -> list[Call]:
    """Run the scripted session once; the usage the server reported for each call."""
    from langchain_anthropic import ChatAnthropic

    clock = Clock()
    script = session_script()

    def tick(reply: Reply):
        def step(body: Any) -> Reply:
            clock.now += SECONDS_PER_CALL
            return reply

        return step

    with AnthropicServer(clock=clock) as server:
        model = ChatAnthropic(
            model="claude-sonnet-4-5", base_url=server.base_url, api_key="local", max_retries=0
        )
        agent = create_deep_agent(
            model,
            backend=LocalShellBackend(root_dir=str(make_workspace())),
            memory=["AGENTS.md"],
            planning=True,
            checkpointer=InMemorySaver(),
            prompt_caching=caching,
        )
        config = {"configurable": {"thread_id": "benchmark"}, "recursion_limit": 200}
        for number, (prompt, replies) in enumerate(script, start=1):
            if number == BREAK_BEFORE_TURN:
                clock.now += BREAK_SECONDS
            server.add(*(tick(r) for r in replies))
            await agent.ainvoke({"messages": [{"role": "user", "content": prompt}]}, config)
        failed = [r for r in server.model_requests() if r.status != 200]
        if failed:
            raise SystemExit(f"the server rejected a request: {failed[0].error}")
        return [
            Call(u["input_tokens"], u["cache_creation_input_tokens"], u["cache_read_input_tokens"])
            for u in server.usages()
        ]


async def measure() -> tuple[list[Call], list[Call]]:
    """The session's calls with caching on, then off."""
    return await run_session(caching=True), await run_session(caching=False)


def report(on: list[Call], off: list[Call]) -> float:
    """Print the per-call table and the totals; return billed-with / billed-without."""
    print(
        f"{'call':>4} {'reply':<11} {'uncached':>9} {'write':>7} {'read':>7} {'billed on':>10}"
        f" {'billed off':>10}"
    )
    for n, (a, b, label) in enumerate(zip(on, off, labels(), strict=True), start=1):
        print(
            f"{n:>4} {label:<11} {a.uncached:>9} {a.written:>7} {a.read:>7} {a.billed:>10.1f}"
            f" {b.billed:>10.1f}"
        )
    billed_on, billed_off = sum(c.billed for c in on), sum(c.billed for c in off)
    ratio = billed_on / billed_off
    print(
        f"total{'':<12} {sum(c.uncached for c in on):>8} {sum(c.written for c in on):>7}"
        f" {sum(c.read for c in on):>7} {billed_on:>10.0f} {billed_off:>10.0f}"
    )
    print(
        f"{len(on)} calls; billed input with caching {billed_on:.0f} vs without "
        f"{billed_off:.0f} tokens: ratio {ratio:.3f} (target <= {TARGET})"
    )
    return ratio


def main() -> None:
    on, off = asyncio.run(measure())
    ratio = report(on, off)
    raise SystemExit(0 if ratio <= TARGET else 1)


if __name__ == "__main__":
    main()
