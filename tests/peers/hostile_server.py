"""An MCP server, in raw JSON-RPC over stdio, that misbehaves as its
arguments say. Run by tests/all/mcp_client.rs.

  hostile_server.py pages SIZE    tools/list never ends: every page is one
                                  tool whose description is SIZE bytes, with
                                  a cursor to the next page
  hostile_server.py flood COUNT   after `initialized`, COUNT notifications
                                  tools/list_changed at once; its one tool,
                                  `lists`, answers how many tools/list
                                  requests it has had

Or its one tool, `act`, misbehaves when called (and the server stays
alive, when it does not exit, until its parent is gone):

  hostile_server.py close-stdin 0    closes its stdin once it has listed its
                                     tools, so that the next request written
                                     to it meets a closed pipe
  hostile_server.py close-stdout 0   closes its stdout instead of answering
  hostile_server.py exit 0           exits instead of answering
  hostile_server.py garbage SIZE     answers with lines that are not JSON,
                                     then a line of SIZE bytes that never
                                     ends
  hostile_server.py hang 0           never answers
"""
import json
import os
import sys
import time

mode, size = sys.argv[1], int(sys.argv[2])
lists = 0


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def tool(name, description=""):
    return {"name": name, "description": description, "inputSchema": {"type": "object"}}


parent = os.getppid()


def idle():
    """Stays alive, doing nothing, until the parent is gone."""
    while os.getppid() == parent:
        time.sleep(0.2)
    os._exit(0)


MISBEHAVING = {"close-stdin", "close-stdout", "exit", "garbage", "hang"}

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
        elif mode in MISBEHAVING:
            result = {"tools": [tool("act")]}
        else:
            result = {"tools": [tool("lists")]}
        send({"jsonrpc": "2.0", "id": id, "result": result})
        if mode == "close-stdin":
            os.close(0)
            idle()
    elif method == "tools/call" and mode == "close-stdout":
        os.close(1)
        for _ in sys.stdin:
            pass
        idle()
    elif method == "tools/call" and mode == "exit":
        os._exit(3)
    elif method == "tools/call" and mode == "garbage":
        sys.stdout.write("this is not JSON\n" * 100 + "{\"jsonrpc\": \"2.0\", \"id\":\n" + "\x00\xff garbage\n" * 100)
        chunk = "x" * (1 << 20)
        for _ in range(size >> 20):
            sys.stdout.write(chunk)
        sys.stdout.flush()
        idle()
    elif method == "tools/call" and mode == "hang":
        pass
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": str(lists)}]}})
    elif id is not None:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})
