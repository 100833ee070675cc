"""An editor whose stdio is a socket (libuv, under Node-based editors, makes them so) and
that leaves with the server's answers unread resets the connection: that is the end of
its input, as a closed pipe is, not a failure."""

from __future__ import annotations

import asyncio
import socket

from deepacp.acp.transport import StdioTransport


async def test_a_reset_from_the_editor_is_the_end_of_its_input() -> None:
    ours, theirs = socket.socketpair()
    theirs.sendall(b'{"jsonrpc": "2.0", "method": "session/update", "params": {}}\n')
    ours.close()  # the editor leaves with our message unread: a reset, not an end of file
    reader, writer = await asyncio.open_connection(sock=theirs)
    transport = StdioTransport(reader, writer)
    assert await asyncio.wait_for(transport.receive(), 5) is None
    writer.close()
