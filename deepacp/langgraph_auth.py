"""Who may use deepacp's harness on a LangGraph server: the holder of the token the server
was started with (`DEEPACP_SERVER_TOKEN`), sent as `Authorization: Bearer TOKEN`.
`langgraph.json` names this as the server's `auth` (with LangGraph Studio's own way in
turned off). A server started without a token serves no one: whoever reaches its port,
and every account on this machine reaches a port on 127.0.0.1, could run commands there
as its user. The server's own calls to itself (background tasks) do not pass through here.
"""

from __future__ import annotations

import hmac
import os

from langgraph_sdk import Auth

from deepacp.session.hosts.threads import TOKEN_VARIABLE

auth = Auth()


@auth.authenticate
async def authenticate(authorization: str | None) -> str:
    """Let in the bearer of the server's token; refuse anyone else in one line."""
    token = os.environ.get(TOKEN_VARIABLE, "")
    if not token:
        raise Auth.exceptions.HTTPException(
            status_code=401,
            detail=f"this server was started without {TOKEN_VARIABLE}, so it serves no one: "
            "restart it with a token set",
        )
    if not hmac.compare_digest((authorization or "").encode(), f"Bearer {token}".encode()):
        raise Auth.exceptions.HTTPException(
            status_code=401,
            detail=f"this server wants its token: set {TOKEN_VARIABLE} to the one it was "
            "started with",
        )
    return "deepacp"
