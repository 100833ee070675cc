"""`deepacp --stdio` on bare pipes, for tests that write and read the frames themselves."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

DEEPACP = str(Path(sys.executable).parent / "deepacp")


async def bare_stdio(home: Path, script: Path, **kwargs: Any) -> asyncio.subprocess.Process:
    """Start `deepacp --stdio` with pipes on stdin and stdout, `home` as its DEEPACP_HOME
    and the scripted model of `script`; `kwargs` go to the subprocess (cwd, limit, …)."""
    env = {**os.environ, "DEEPACP_HOME": str(home), "DEEPACP_MODEL": f"scripted:{script}"}
    return await asyncio.create_subprocess_exec(
        DEEPACP,
        "--stdio",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=env,
        **kwargs,
    )
