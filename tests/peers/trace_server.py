"""An MCP server on stdio, written with the official Python SDK (2.x), whose
tool `seen` reports what its request carried: the protocol revision it was
served on and the W3C trace context in its `_meta`. A bridged server for the
Rust tests (tests/all/mcp_revisions.rs): it shows which revision the bridge
negotiated and what trace context reaches a bridged server. Its tool
`ask_name` asks its client for a name by a multi-round-trip result, whatever
the client declared (as a careless 2026-07-28 server might).

usage: trace_server.py   (serves on stdin/stdout)
"""
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

server = MCPServer("trace-peer")


@server.tool()
def seen(ctx: Context) -> dict:
    """What this request carried: its protocol revision and trace context."""
    request = ctx.request_context
    meta = request.meta or {}
    return {
        "protocolVersion": request.protocol_version,
        "traceparent": meta.get("traceparent"),
        "tracestate": meta.get("tracestate"),
    }


@server.tool()
def ask_name(ctx: Context) -> str | InputRequiredResult:
    """Asks the client for a name, and greets it once answered."""
    answer = (ctx.input_responses or {}).get("name")
    if answer is not None:
        return f"Hello, {answer}!"
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    question = ElicitRequest(params=ElicitRequestFormParams(message="Your name?", requested_schema=schema))
    return InputRequiredResult(input_requests={"name": question})


if __name__ == "__main__":
    server.run("stdio")
