"""The `deepacp` command line.

`deepacp --stdio` is what editors start; it stays on a light import path so `initialize`
is answered before LangChain loads.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from deepacp._version import __version__
from deepacp.cli_help import page
from deepacp.requires_python import check_python
from deepacp.run.exits import EPILOG as EXIT_CODES

if TYPE_CHECKING:
    from deepacp.backends.sandbox import SandboxPolicy
    from deepacp.config import ServerOptions

SANDBOX_HELP = (
    "how commands are confined: workspace-write (default where bubblewrap works), "
    "workspace-write+network, read-only, off"
)
REMOTE_HELP = (
    "work on a checkout on another machine: ssh://[user@]host[:port]/path/to/repo "
    "(or docker://container/path); its files and commands are there"
)
PROFILE_HELP = (
    "the harness profile: auto (default: chosen from the model and its server), default, "
    "or small-local (short tool descriptions, fewer tools, for small contexts)"
)
SERVER_HELP = (
    "run the harness on the LangGraph server at URL (`langgraph dev` in a deepacp checkout); "
    "the files are the server's"
)
RUN_DESCRIPTION = (
    "Run one prompt with the agent in this folder (or --cwd) and exit: streamed text, tool "
    "lines, each edit's diff before its y/n approval (denied without a terminal, unless "
    "--mode yolo). Each run is a session: its id is printed at the end (json: session_id), "
    "for --resume; --continue takes the last one here."
)
USAGE_EXAMPLES = """\
examples:
  deepacp --stdio                       ACP agent server for Zed, JetBrains and other ACP clients
  deepacp setup                         choose a model provider and store its API key
  deepacp demo                          an offline demo on a copy of a small example project
  deepacp run --model anthropic:claude-sonnet-4-5 "add type hints to utils.py"
  deepacp run --mode yolo "run the tests and fix what fails"
  deepacp run --effort high "why does the parser reject this file?"
  deepacp --stdio --remote ssh://me@build-box/home/me/repo   a checkout on another machine
"""


BY_HAND = {
    "acp": (
        "deepacp --stdio: the Agent Client Protocol server an editor starts (Zed, a JetBrains "
        "IDE, Neovim's avante or CodeCompanion); it reads JSON-RPC, one message a line, here "
        "on stdin. `deepacp doctor` prints the set-up for your editor; Ctrl-D quits."
    ),
    "lsp": (
        "deepacp lsp: the language server for inline review an editor starts (Neovim, Helix, "
        "Emacs, VS Code); it reads LSP messages (a Content-Length header, a blank line, the "
        "JSON) here on stdin. `deepacp doctor` prints the set-up for your editor; Ctrl-D quits."
    ),
}
"""What each server says when a person starts it in a terminal, where no editor is."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="deepacp",
        description="A deep coding agent that lives in your editor.",
        epilog=USAGE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"deepacp {__version__}")
    parser.add_argument(
        "--stdio", action="store_true", help="serve the Agent Client Protocol on stdin/stdout"
    )
    parser.add_argument("--model", help="model spec, such as anthropic:claude-sonnet-4-5")
    parser.add_argument(
        "--no-plan", action="store_true", help="do not offer the plan tool (write_todos)"
    )
    parser.add_argument("--sandbox", metavar="POLICY", help=SANDBOX_HELP)
    parser.add_argument("--remote", metavar="URL", help=REMOTE_HELP)
    parser.add_argument("--server", metavar="URL", help=SERVER_HELP)
    parser.add_argument("--profile", metavar="NAME", help=PROFILE_HELP)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser(
        "demo",
        help="run the offline demo (scripted model, example project)",
        **page("demo"),
    )
    commands.add_parser(
        "lsp",
        help="serve the Language Server Protocol on stdin/stdout",
        **page("lsp"),
    )
    commands.add_parser(
        "doctor",
        help="check the set-up and print the snippet for your editor",
        **page("doctor"),
    )
    commands.add_parser(
        "setup",
        help="choose the model provider and store its API key (asked in the terminal)",
        **page("setup"),
    )
    commands.add_parser(
        "logout",
        help="forget the API keys `deepacp setup` stored",
        **page("logout"),
    )
    add_run(commands)
    return parser


def add_run(commands: Any) -> None:
    """The `deepacp run` command and its flags."""
    run = commands.add_parser(
        "run",
        help="run one prompt in a terminal, headless",
        description=RUN_DESCRIPTION,
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "prompt", nargs="?", help="what to ask the agent; - (or none, with a pipe): read stdin"
    )
    run.add_argument("--cwd", help="the workspace (default: the current directory)")
    run.add_argument(
        "--model",
        dest="run_model",
        metavar="MODEL",
        help="model spec (overrides the global --model)",
    )
    run.add_argument(
        "--mode",
        choices=["ask", "accept-edits", "plan", "yolo"],
        help="ask (default; without a terminal, gated calls are denied), accept-edits, plan, yolo",
    )
    run.add_argument(
        "--effort",
        choices=["off", "low", "medium", "high"],
        help="reasoning effort, where the model has it (default: effort in config.toml)",
    )
    run.add_argument("--sandbox", dest="run_sandbox", metavar="POLICY", help=SANDBOX_HELP)
    run.add_argument(
        "--goal", help="what done looks like: a grader checks the work before the turn ends"
    )
    run.add_argument("--remote", dest="run_remote", metavar="URL", help=REMOTE_HELP)
    run.add_argument("--server", dest="run_server", metavar="URL", help=SERVER_HELP)
    run.add_argument(
        "--file",
        action="append",
        default=[],
        metavar="PATH",
        help="attach a text file to the prompt (repeatable)",
    )
    run.add_argument(
        "--output-format",
        choices=["text", "json", "stream-json"],
        default="text",
        help="text (default); json: one object at the end (answer, stop_reason, usage, "
        "files_changed, session_id, error); stream-json: one JSON event a line as it happens",
    )
    run.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="print only the final answer on stdout (the text format)",
    )
    run.add_argument(
        "--max-turns",
        type=positive,
        metavar="N",
        help="stop after N agentic turns (model responses, each with the tool calls it makes); "
        "the run then exits 4 with stop_reason max_turn_requests",
    )
    sessions = run.add_mutually_exclusive_group()
    sessions.add_argument(
        "--resume", metavar="SESSION", help="continue the session with this id (printed by run)"
    )
    sessions.add_argument(
        "-c",
        "--continue",
        dest="continue_last",
        action="store_true",
        help="continue the last session in this folder",
    )
    run.add_argument("--profile", dest="run_profile", metavar="NAME", help=PROFILE_HELP)


def positive(value: str) -> int:
    """A count of at least 1 (argparse's type for --max-turns)."""
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of 1 or more")
    return int(value)


def sandbox_flag(value: str | None) -> SandboxPolicy | None:
    """The --sandbox policy, checked (a `ConfigError` names the policies there are)."""
    if value is None:
        return None
    from deepacp.backends.sandbox import parse_policy
    from deepacp.errors import ConfigError

    try:
        return parse_policy(value)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def profile_flag(value: str | None) -> str | None:
    """The --profile name, checked (a `ConfigError` names the profiles there are)."""
    from deepacp.config import parse_profile

    return parse_profile(value, "--profile") if value else None


def server_options(args: argparse.Namespace) -> ServerOptions:
    """What `deepacp --stdio` was told on its command line."""
    from deepacp.config import ServerOptions

    return ServerOptions(
        model=args.model,
        planning=not args.no_plan,
        sandbox=sandbox_flag(args.sandbox),
        remote=args.remote,
        server=args.server,
        profile=profile_flag(args.profile),
    )


def main(argv: list[str] | None = None) -> int:
    check_python()  # first: on an older Python, one line instead of a traceback
    raw = sys.argv[1:] if argv is None else argv
    if raw[:1] == ["sandbox"]:  # an editor's terminal starting a sandboxed command for us
        from deepacp.backends.sandbox_launch import main as launch

        return launch(raw[1:])
    args = build_parser().parse_args(raw)
    from deepacp.errors import DeepacpError
    from deepacp.stdio import say_if_terminal

    try:
        if args.command == "setup":  # before --stdio: clients append `setup` to the ACP command
            from deepacp.setup import run_setup

            return run_setup(args.model)
        if args.stdio:
            from deepacp.acp.server import serve

            say_if_terminal(BY_HAND["acp"])
            return serve(server_options(args))
        if args.command == "lsp":
            from deepacp.lsp.boot import serve as serve_lsp

            sandbox = sandbox_flag(args.sandbox)
            profile = profile_flag(args.profile)
            say_if_terminal(BY_HAND["lsp"])
            return serve_lsp(sandbox, profile)
        if args.command == "doctor":
            from deepacp.doctor import run_doctor

            return run_doctor(args.model, args.server)
        if args.command == "logout":
            from deepacp.setup import run_logout

            return run_logout()
        if args.command == "demo":
            from deepacp.demo import run_demo

            return run_demo()
        if args.command == "run":
            from deepacp.headless import RunOptions, run_headless

            options = RunOptions(
                args.prompt,
                args.cwd,
                args.run_model or args.model,
                args.mode,
                args.effort,
                sandbox_flag(args.run_sandbox or args.sandbox),
                args.goal,
                args.run_remote or args.remote,
                args.run_server or args.server,
                tuple(args.file),
                args.output_format,
                args.quiet,
                args.max_turns,
                args.resume,
                args.continue_last,
                profile_flag(args.run_profile or args.profile),
            )
            return run_headless(options)
        build_parser().print_help()
        return 0
    except DeepacpError as exc:
        from deepacp.secrets import redact

        print(f"deepacp: {redact(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
