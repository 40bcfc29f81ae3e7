"""An MCP server on stdio, written with the official Python SDK (2.x), whose
tool `seen` reports what its request carried: the protocol revision it was
served on and the W3C trace context in its `_meta`. A bridged server for the
Rust tests (tests/all/mcp_revisions.rs): it shows which revision the bridge
negotiated and what trace context reaches a bridged server. Its tool
`ask_name` asks its client for a name by a multi-round-trip result, whatever
the client declared (as a careless 2026-07-28 server might). Its tool
`interview` asks in two rounds (the user's name and a greeting from the
client's model, then a colour, the first answers carried in its
requestState), and `where` asks for the client's roots; the prompt
`introduce` and the resources `card://{who}` ask too; `pester` (asks for
ever) and `flood` (17 questions at once) are a hostile server's: what toolhost's
bridge relays to its own caller. `seen` also reports the client
capabilities the request declared.

usage: trace_server.py   (serves on stdin/stdout)
"""
import json

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (CreateMessageRequest, CreateMessageRequestParams, ElicitRequest, ElicitRequestFormParams,
                       InputRequiredResult, ListRootsRequest, SamplingMessage, TextContent)

server = MCPServer("trace-peer")


@server.tool()
def seen(ctx: Context) -> dict:
    """What this request carried: its protocol revision and trace context."""
    request = ctx.request_context
    meta = request.meta or {}
    caps = ctx.client_capabilities
    return {
        "protocolVersion": request.protocol_version,
        "traceparent": meta.get("traceparent"),
        "tracestate": meta.get("tracestate"),
        "clientCapabilities": caps.model_dump(mode="json", by_alias=True, exclude_none=True) if caps else None,
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


def field(value, key):
    """`key` of an answer, whether the SDK gave it as a model or a dict."""
    if value is None:
        return None
    if isinstance(value, dict):
        return value.get(key)
    return getattr(value, key, None)


def form(message, name):
    schema = {"type": "object", "properties": {name: {"type": "string"}}, "required": [name]}
    return ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))


@server.tool()
def interview(ctx: Context) -> str | InputRequiredResult:
    """Asks the user's name and the model's greeting, then a colour."""
    responses = ctx.input_responses or {}
    if ctx.request_state is None:
        if "name" not in responses:
            greet = CreateMessageRequest(params=CreateMessageRequestParams(
                messages=[SamplingMessage(role="user", content=TextContent(type="text", text="Greet a guest"))],
                max_tokens=50))
            return InputRequiredResult(input_requests={"name": form("Your name?", "name"), "greeting": greet})
        name = responses["name"]
        if field(name, "action") != "accept":
            return f"declined by the user ({field(name, 'action')})"
        greeting = field(field(responses["greeting"], "content"), "text")
        state = json.dumps({"name": field(name, "content")["name"], "greeting": greeting})
        return InputRequiredResult(input_requests={"color": form("Your favourite colour?", "color")},
                                   request_state=state)
    known = json.loads(ctx.request_state)
    color = responses["color"]
    if field(color, "action") != "accept":
        return f"declined by the user ({field(color, 'action')})"
    return f"{known['name']} likes {field(color, 'content')['color']}; the model said: {known['greeting']}"


@server.tool()
def where(ctx: Context) -> str | InputRequiredResult:
    """Asks the client for its roots and lists their URIs."""
    answer = (ctx.input_responses or {}).get("roots")
    if answer is None:
        return InputRequiredResult(input_requests={"roots": ListRootsRequest()})
    return " ".join(str(field(root, "uri")) for root in field(answer, "roots"))


@server.tool()
def pester(ctx: Context) -> str | InputRequiredResult:
    """A hostile server's tool: asks again after every answer, for ever."""
    asked = int(ctx.request_state or "0")
    return InputRequiredResult(input_requests={"again": form(f"Question {asked + 1}?", "name")},
                               request_state=str(asked + 1))


@server.tool()
def flood(ctx: Context) -> str | InputRequiredResult:
    """A hostile server's tool: asks 17 questions at once."""
    return InputRequiredResult(input_requests={f"q{i}": form(f"Question {i}?", "name") for i in range(17)})


@server.prompt()
def introduce(ctx: Context) -> str | InputRequiredResult:
    """A prompt that first asks the user's name."""
    answer = (ctx.input_responses or {}).get("name")
    if answer is None:
        return InputRequiredResult(input_requests={"name": form("Who is speaking?", "name")})
    return f"Please greet {field(answer, 'content')['name']}."


@server.resource("card://{who}")
def card(who: str, ctx: Context) -> str | InputRequiredResult:
    """A card for `who`, signed by the user, who is asked for a signature."""
    answer = (ctx.input_responses or {}).get("signature")
    if answer is None:
        return InputRequiredResult(input_requests={"signature": form(f"Sign the card for {who}", "name")})
    return f"Dear {who}, from {field(answer, 'content')['name']}"


if __name__ == "__main__":
    server.run("stdio")
