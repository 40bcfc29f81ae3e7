"""A tiny MCP server (Python SDK) whose tool names collide once sanitized to
the tool-name rule: `read.file` and `read_file` both become `..._read_file`.
Run over stdio by tests/all/mcp_client.rs."""
from mcp.server.mcpserver import MCPServer

server = MCPServer("colliding")


@server.tool(name="read.file")
def read_dot_file(path: str) -> str:
    return "dot:" + path


@server.tool(name="read_file")
def read_underscore_file(path: str) -> str:
    return "underscore:" + path


@server.tool(name="status")
def status() -> str:
    return "ok"


server.run("stdio")
