"""Drives an MCP server with the official Python SDK's client and prints what
it saw as one JSON object on stdout. Run by the Rust tests (tests/all/mcp_server.rs).

usage: mcp_client.py stdio COMMAND ARGS...   (spawns the server)
       mcp_client.py http URL [TOKEN]
Then reads a JSON list of steps on stdin (a first {"discover": true} opens
as MCP 2026-07-28 does, with `server/discover`), e.g.
  [{"call": "greet", "args": {"name": "Ada"}}, {"list": true}]
A call step with "meta": {...} sends it as the request's `_meta` (beside
what the SDK adds). A call step with "progress": true sends a progressToken and prints the
progress notifications it received, in order, as "progress".
A call step with "until": TEXT repeats the call, every 0.2 s for up to 60 s,
until its text contains TEXT (a JSON-RPC error, such as a tool not listed
yet, counts as not yet), and prints the last result with "attempts" (how
many calls it took).
A step {"set_level": "debug"} sets the server's logging level; the log
messages received are printed as "logs" (level, logger, data), in order.
A step {"elicit": "once"} makes the client declare the elicitation capability
and answer later elicitations by accepting with that decision ("decline":
declining; an object: accepting with it as the content); the messages it was
asked are printed as "elicitations".
A step {"sample": "TEXT"} makes the client declare the sampling capability
and answer sampling requests with TEXT (model "test-model"); the requests are
printed as "samplings".
A step {"roots": [{"uri": ..., "name": ...}]} makes the client declare the
roots capability and answer roots/list with those roots; how many times it
was asked is printed as "roots_listed".
Catalog steps: {"prompts": true}, {"get_prompt": NAME, "args": {...}},
{"resources": true} (resources and templates), {"read": URI},
{"complete": {"ref": {...}, "argument": {"name": ..., "value": ...}}},
{"subscribe": URI}, {"unsubscribe": URI}. A request the server refuses
prints {"error": {"code": ..., "message": ...}}.
"""
import asyncio
import json
import sys

import httpx2
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


def tool_json(t):
    ann = t.annotations.model_dump(exclude_none=True, by_alias=True) if t.annotations else None
    return {"name": t.name, "description": t.description, "input_schema": t.input_schema,
            "output_schema": t.output_schema, "annotations": ann}


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def catalog_step(session, step):
    """One catalog step's output, or None when `step` is no catalog step."""
    if "prompts" in step:
        return {"prompts": [dump(p) for p in (await session.list_prompts()).prompts]}
    if "get_prompt" in step:
        r = await session.get_prompt(step["get_prompt"], step.get("args"))
        return {"description": r.description, "messages": [dump(m) for m in r.messages]}
    if "resources" in step:
        resources = (await session.list_resources()).resources
        templates = (await session.list_resource_templates()).resource_templates
        return {"resources": [dump(r) for r in resources], "templates": [dump(t) for t in templates]}
    if "read" in step:
        r = await session.read_resource(step["read"])
        return {"contents": [dump(c) for c in r.contents]}
    if "complete" in step:
        c = step["complete"]
        ref = c["ref"]
        ref = (types.PromptReference(type="ref/prompt", name=ref["name"]) if ref["type"] == "ref/prompt"
               else types.ResourceTemplateReference(type="ref/resource", uri=ref["uri"]))
        r = await session.complete(ref, c["argument"], c.get("context"))
        return {"completion": dump(r.completion)}
    if "subscribe" in step:
        await session.subscribe_resource(step["subscribe"])
        return {}
    if "unsubscribe" in step:
        await session.unsubscribe_resource(step["unsubscribe"])
        return {}
    return None


async def run(session, steps, notes, elicit, logs):
    # A first step {"discover": true} opens the connection as MCP 2026-07-28
    # does (`server/discover`, no session); otherwise the `initialize`
    # handshake of the latest earlier revision.
    if steps and steps[0].get("discover"):
        steps = steps[1:]
        init = await session.discover()
        server_name = session.server_info.name if session.server_info else None
    else:
        init = await session.initialize()
        server_name = init.server_info.name
    out = {"server_name": server_name, "steps": [], "elicitations": elicit["asked"], "logs": logs,
           "samplings": elicit["sampled"], "capabilities": dump(init.capabilities),
           "protocol_version": session.protocol_version}
    out["roots_listed"] = elicit["roots_listed"]
    for step in steps:
        try:
            out["steps"].append(await one_step(session, step, notes, elicit))
            out["roots_listed"] = elicit["roots_listed"]
        except MCPError as e:
            # A JSON-RPC error answer, as the server sent it.
            out["steps"].append({"error": {"code": e.error.code, "message": e.error.message, "data": e.error.data}})
        await settle()
    return out


async def settle():
    """Lets the notification handlers the SDK has started run to their end.

    The SDK (2.x) hands each notification it reads to a task of its own, so
    the answer to a request can reach its caller before the handlers of the
    notifications that came before it on the wire (a call's log records)
    have run: on a busy machine, a record would be missed. Those handlers
    await nothing but each other, so yielding to them enough times lets
    every one finish; no clock is involved.
    """
    for _ in range(100):
        await asyncio.sleep(0)


async def one_step(session, step, notes, elicit):
    caught = await catalog_step(session, step)
    if caught is not None:
        return caught
    if "sample" in step:
        elicit["sample"] = step["sample"]
        return {}
    if "roots" in step:
        elicit["roots"] = step["roots"]
        return {}
    if "set_level" in step:
        await session.set_logging_level(step["set_level"])
        return {}
    if "elicit" in step:
        elicit["answer"] = step["elicit"]
        return {}
    if "list" in step:
        listed = await session.list_tools()
        return {"tools": [tool_json(t) for t in listed.tools],
                "ttl_ms": getattr(listed, "ttl_ms", None), "cache_scope": getattr(listed, "cache_scope", None)}
    if "call" in step:
        seen = []

        async def on_progress(progress, total, message):
            seen.append({"progress": progress, "total": total, "message": message})

        callback = on_progress if step.get("progress") else None
        attempts = 0
        while True:
            attempts += 1
            try:
                r = await session.call_tool(step["call"], step.get("args", {}), progress_callback=callback,
                                            meta=step.get("meta"))
            except MCPError:
                if "until" not in step or attempts >= 300:
                    raise
                await asyncio.sleep(0.2)
                continue
            texts = [c.text for c in r.content if getattr(c, "type", "") == "text"]
            if "until" not in step or step["until"] in "\n".join(texts) or attempts >= 300:
                break
            await asyncio.sleep(0.2)
        blocks = [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in r.content]
        out = {"is_error": bool(r.is_error), "text": "\n".join(texts),
               "structured": r.structured_content, "progress": seen,
               "content": blocks}
        if "until" in step:
            out["attempts"] = attempts
        return out
    if "wait_list_changed" in step:
        for _ in range(100):
            if notes:
                break
            await asyncio.sleep(0.05)
        return {"list_changed": len(notes)}
    raise ValueError(f"unknown step {step}")


async def main():
    mode = sys.argv[1]
    steps = json.loads(sys.stdin.read() or "[]")
    notes = []
    elicit = {"answer": None, "asked": [], "sample": None, "sampled": [], "roots": [], "roots_listed": 0}

    async def on_elicit(context, params):
        elicit["asked"].append({"message": params.message, "schema": params.requested_schema})
        if elicit["answer"] == "decline":
            return types.ElicitResult(action="decline")
        if isinstance(elicit["answer"], dict):
            return types.ElicitResult(action="accept", content=elicit["answer"])
        return types.ElicitResult(action="accept", content={"decision": elicit["answer"]})

    async def on_sample(context, params):
        elicit["sampled"].append(dump(params))
        return types.CreateMessageResult(role="assistant", model="test-model", stopReason="endTurn",
                                         content=types.TextContent(type="text", text=elicit["sample"]))

    callbacks = {"elicitation_callback": on_elicit} if any("elicit" in s for s in steps) else {}
    if any("sample" in s for s in steps):
        callbacks["sampling_callback"] = on_sample

    async def on_list_roots(context):
        elicit["roots_listed"] += 1
        return types.ListRootsResult(roots=[types.Root(**r) for r in elicit["roots"]])

    if any("roots" in s for s in steps):
        callbacks["list_roots_callback"] = on_list_roots
    logs = []

    async def on_log(params):
        logs.append({"level": params.level, "logger": params.logger, "data": params.data})

    callbacks["logging_callback"] = on_log

    async def on_message(message):
        name = type(getattr(message, "root", message)).__name__
        if "ToolListChanged" in name or "ToolListChanged" in type(message).__name__:
            notes.append(1)

    if mode == "stdio":
        params = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, message_handler=on_message, **callbacks) as session:
                out = await run(session, steps, notes, elicit, logs)
    else:
        url = sys.argv[2]
        headers = {"Authorization": f"Bearer {sys.argv[3]}"} if len(sys.argv) > 3 else {}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as client:
            async with streamable_http_client(url, http_client=client) as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write, message_handler=on_message, **callbacks) as session:
                    out = await run(session, steps, notes, elicit, logs)
    print(json.dumps(out))


asyncio.run(main())
