"""An MCP server, in raw JSON-RPC over stdio, that misbehaves as its
arguments say. Run by tests/all/mcp_client.rs.

  hostile_server.py pages SIZE    tools/list never ends: every page is one
                                  tool whose description is SIZE bytes, with
                                  a cursor to the next page
  hostile_server.py flood COUNT   after `initialized`, COUNT notifications
                                  tools/list_changed at once; its one tool,
                                  `lists`, answers how many tools/list
                                  requests it has had
"""
import json
import sys

mode, size = sys.argv[1], int(sys.argv[2])
lists = 0


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def tool(name, description=""):
    return {"name": name, "description": description, "inputSchema": {"type": "object"}}


for line in sys.stdin:
    message = json.loads(line)
    method, id = message.get("method"), message.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "hostile", "version": "0"}}})
    elif method == "notifications/initialized" and mode == "flood":
        note = json.dumps({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}) + "\n"
        sys.stdout.write(note * size)
        sys.stdout.flush()
    elif method == "tools/list":
        lists += 1
        if mode == "pages":
            page = int((message.get("params") or {}).get("cursor") or 0)
            result = {"tools": [tool(f"t{page}", "x" * size)], "nextCursor": str(page + 1)}
        else:
            result = {"tools": [tool("lists")]}
        send({"jsonrpc": "2.0", "id": id, "result": result})
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": str(lists)}]}})
    elif id is not None:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})
