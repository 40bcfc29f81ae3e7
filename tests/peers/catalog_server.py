"""A small MCP server (Python SDK) whose catalog changes when asked, for the
lazy bridge's tests (tests/all/mcp_lazy.rs). Over stdio.

usage: catalog_server.py [N]   (N more tools, filler_000 ..., each answering
                                "filler K: QUERY")

Tools: echo(message), delete_item(id), fail(reason) (reports an error, as
isError), lists() (how many tools/list requests it has answered), and
grow(name, notify) which adds a tool NAME (answering "I am NAME") and, with
notify, sends notifications/tools/list_changed (on the client's
subscriptions/listen stream on MCP 2026-07-28); without, it changes its
catalog silently.
"""
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("catalog")
listed = 0
original_list_tools = server.list_tools


async def counted_list_tools():
    global listed
    listed += 1
    return await original_list_tools()


server.list_tools = counted_list_tools


@server.tool()
def echo(message: str) -> str:
    """Echoes the message."""
    return "echo: " + message


@server.tool()
def delete_item(id: str) -> str:
    """Deletes an item (pretends to)."""
    return "deleted " + id


@server.tool()
def fail(reason: str) -> str:
    """Fails with the reason."""
    raise ToolError("failed: " + reason)


@server.tool()
def lists() -> str:
    """How many tools/list requests this server has answered."""
    return str(listed)


@server.tool()
async def grow(name: str, ctx: Context, notify: bool = False) -> str:
    """Adds a tool NAME; with notify, says the tool list changed."""
    server.add_tool(lambda: "I am " + name, name=name, description="Added by grow.")
    if notify:
        # MCP 2026-07-28 (what toolhost's bridge opens when offered) sends
        # list changes on `subscriptions/listen` streams; the earlier
        # revisions, to the session.
        if ctx.request_context.protocol_version >= "2026-07-28":
            await ctx.notify_tools_changed()
        else:
            await ctx.session.send_tool_list_changed()
    return "grown " + name


def filler(k):
    def answer(query: str) -> str:
        return f"filler {k}: {query}"
    return answer


for k in range(int(sys.argv[1]) if len(sys.argv) > 1 else 0):
    server.add_tool(filler(k), name=f"filler_{k:03}", description=f"Filler tool {k}.")

server.run("stdio")
