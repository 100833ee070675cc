"""Tool names: a stable interface, defined once (importing this module costs nothing)."""

LS = "ls"
READ_FILE = "read_file"
WRITE_FILE = "write_file"
EDIT_FILE = "edit_file"
DELETE = "delete"
GLOB = "glob"
GREP = "grep"
EXECUTE = "execute"
WRITE_TODOS = "write_todos"  # LangChain's TodoListMiddleware
TASK = "task"
START_BACKGROUND_TASK = "start_background_task"
CHECK_BACKGROUND_TASK = "check_background_task"
UPDATE_BACKGROUND_TASK = "update_background_task"
CANCEL_BACKGROUND_TASK = "cancel_background_task"
LIST_BACKGROUND_TASKS = "list_background_tasks"

MEMORY_FILE = "AGENTS.md"
"""The name of a memory file (the workspace's, a subfolder's, the user's)."""

LARGE_RESULTS_DIR = "/large_tool_results/"
"""Where a tool result too large to show is kept, as <tool call id>."""
HISTORY_DIR = "/conversation_history/"
"""Where summarized spans and evicted inputs are kept."""

MUTATING_FILE_TOOLS = frozenset({WRITE_FILE, EDIT_FILE, DELETE})
"""Tools that change a file named by their `file_path` argument."""

SELF_LIMITING_TOOLS = frozenset({LS, READ_FILE, GLOB, GREP, WRITE_FILE, EDIT_FILE, DELETE})
"""Tools whose results are bounded already, so they are never offloaded."""

OUTSIDE_SANDBOX_ARG = "outside_sandbox"
"""The execute argument that asks to run a command outside the sandbox."""
