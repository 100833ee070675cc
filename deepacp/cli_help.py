"""The `--help` page of each `deepacp` command: what it does, what it reads and writes."""

import argparse
from typing import Any

LOG = (
    "The log is $DEEPACP_HOME/logs/deepacp.log (DEEPACP_HOME defaults to ~/.deepacp; secrets "
    "are redacted); DEEPACP_LOG_LEVEL=DEBUG writes more to it."
)

COMMAND_PAGES = {
    "lsp": (
        "Serve the Language Server Protocol on stdin and stdout: the inline-review face that an "
        "editor starts (Neovim, Helix, Emacs, VS Code), not a command to type yourself. Ask for "
        "a change with the deepacp.edit command, a `deepacp: ...` instruction comment or "
        "'deepacp: fix this' on a diagnostic; the agent's edits come back as a proposal (hints "
        "on the changed lines, the diff on hover, code actions to accept or reject each hunk) "
        "and nothing in the project changes until you accept. Shell commands ask first and run "
        "in the read-only sandbox.\n\n"
        "The model is DEEPACP_MODEL, `model` in config.toml or the client's initializationOptions; "
        "global options go before the command: deepacp --sandbox off lsp. `deepacp doctor` "
        f"prints the set-up for your editor. {LOG}"
    ),
    "doctor": (
        "Check the set-up, for when an editor says the agent failed to start: Python and the "
        "packages, the model and its provider package and key (never printing the key), rg, the "
        "sandbox, that $DEEPACP_HOME is writable and private and its databases are sound, and "
        "that `deepacp --stdio` answers. It prints where the log is, the full path of the "
        "deepacp command (an editor started outside this environment needs it) and the snippet "
        "for the editor it runs in.\n\n"
        "Global options go before the command: deepacp --model anthropic:claude-sonnet-4-5 "
        "doctor checks that model, deepacp --server URL doctor that LangGraph server. "
        "Exits 1 when a check fails."
    ),
    "setup": (
        "Choose the model provider and give its API key, in a terminal: the key is read without "
        "echo, checked with one request to the provider (a refused key is not kept), and kept "
        "in the OS keyring, or where there is none in "
        "$DEEPACP_HOME/credentials.json, readable only by you. Or choose a local server "
        "(Ollama, or an OpenAI-compatible one: llama.cpp, LM Studio, vLLM) and one of the "
        "models it lists. When no model is configured "
        "yet, the provider's default model is written to $DEEPACP_HOME/config.toml. A key "
        "variable set in the environment (ANTHROPIC_API_KEY, say) wins over the stored key. "
        "`deepacp logout` forgets the stored keys.\n\n"
        "ACP clients run this as their sign-in step (the command they start deepacp with, plus "
        "`setup`). deepacp --model MODEL setup sets up that model's provider."
    ),
    "logout": (
        "Forget the API keys `deepacp setup` stored (in the OS keyring and in "
        "$DEEPACP_HOME/credentials.json). Keys set in the environment and the model in "
        "config.toml stay as they are."
    ),
    "demo": (
        "Run the offline demo: no API key and no network. A scripted model fixes a failing test "
        "in a copy of a small example project (your files are not touched), driven over the "
        "Agent Client Protocol the way an editor drives `deepacp --stdio`: you see the streamed "
        "answer, the plan, the tool cards, the diff and then the approval prompt for it, and "
        "the session loaded again in a fresh server process. The fixed copy is kept in a "
        "temporary folder the demo names at the end."
    ),
}
"""Each command's description (argparse wraps it to the terminal)."""


class Paragraphs(argparse.HelpFormatter):
    """Wraps each paragraph of a description to the terminal, keeping the blank line between
    them (argparse's own formatter runs them together)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        fill = super()._fill_text
        return "\n\n".join(fill(paragraph, width, indent) for paragraph in text.split("\n\n"))


def page(command: str) -> dict[str, Any]:
    """The `add_parser` arguments that give `command` its help page."""
    return {"description": COMMAND_PAGES[command], "formatter_class": Paragraphs}
