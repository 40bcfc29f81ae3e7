"""An MCP server on stdio, written with the official Python SDK (2.x), whose
one tool reports what its request carried: the protocol revision it was
served on and the W3C trace context in its `_meta`. A bridged server for the
Rust tests (tests/all/mcp_revisions.rs): it shows which revision the bridge
negotiated and what trace context reaches a bridged server.

usage: trace_server.py   (serves on stdin/stdout)
"""
from mcp.server.mcpserver import Context, MCPServer

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


if __name__ == "__main__":
    server.run("stdio")
