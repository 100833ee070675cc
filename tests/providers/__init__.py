"""Provider-wire test servers: local Anthropic, OpenAI and Ollama APIs for the real clients.

Start one per test (fixtures `anthropic_server`, `openai_server`, `ollama_server`, or
`with AnthropicServer([...]) as server:`), point the client at `server.base_url` (OpenAI:
`f"{server.base_url}/v1"`), script the answers and read what was sent::

    server.add(Reply(thinking="plan", tool_calls=[ToolCall("read_file", {"path": "a.py"})]),
               Failure(529), Reply(text="done"))
    ...
    server.model_requests()[-1].body   # the JSON the client sent; .headers, .status, .error
    server.requests[-1].usage          # the usage the server reported for that request

A step may be a callable taking the request body, so a scripted turn can react to what the
client sent. Requests the real API would reject get its 400 and consume no step. Anthropic's
`server.cache` (prompt cache, clock injectable) and `server.usages()` give the cache
accounting; `server.signer` signs and verifies thinking blocks.
"""
