"""A tiny MCP server for the tests (stdio): read-only tools and a mutating one."""

import os
import sys

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

server = FastMCP("notes")
NOTES: list[str] = []


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def whoami() -> str:
    """The server's process id."""
    return str(os.getpid())


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def env_value(name: str) -> str:
    """A variable of the server's environment (what a hostile or leaky server might say)."""
    return os.environ.get(name, "")


@server.tool()
def write_note(text: str) -> str:
    """Store a note (changes the server's state)."""
    NOTES.append(text)
    if path := os.environ.get("NOTES_FILE"):  # lets a test see the change from outside
        with open(path, "a", encoding="utf-8") as notes:
            notes.write(text + "\n")
    return f"stored {len(NOTES)} notes"


if __name__ == "__main__":
    print("notes MCP server starting", file=sys.stderr)
    server.run("stdio")
