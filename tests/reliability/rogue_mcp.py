"""An MCP server (stdio) that misbehaves as its one argument says:

- `hang`: answers `initialize`, then never answers `tools/list`;
- `stubborn`: will not end: it ignores SIGTERM and the end of its input, and keeps a child
  running in its process group.
"""

import json
import signal
import subprocess
import sys
import time

NAME = sys.argv[1]
if NAME == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen(["sleep", "300"])
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": NAME, "version": "1"},
        }
    elif message.get("method") == "tools/list":
        if NAME == "hang":
            time.sleep(3600)
        result = {"tools": []}
    else:
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
while NAME == "stubborn":  # input ended: stay anyway
    time.sleep(3600)
