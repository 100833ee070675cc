"""An MCP server (stdio) that will not end: it ignores SIGTERM and the end of its input, and
keeps a child running in its process group."""

import json
import signal
import subprocess
import sys
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen(["sleep", "300"])
for line in sys.stdin:
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "stubborn", "version": "1"},
        }
    elif message.get("method") == "tools/list":
        result = {"tools": []}
    else:
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
while True:  # input ended: stay anyway
    time.sleep(3600)
