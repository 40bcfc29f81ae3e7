"""Drives an MCP server with the official Python SDK's `Client` in its
default mode (it sends `server/discover` and speaks 2026-07-28, where a
server asks by InputRequiredResult) and prints what it saw as one JSON
object on stdout. Run by the Rust tests (tests/all/mrtr.rs).

usage: mrtr_client.py URL [CLIENT_NAME]   (the clientInfo name it declares)
Then reads a JSON list of steps on stdin; each prints one entry of "steps":
  {"call": NAME, "args": {...}, "answer": A}
      calls the tool through the SDK's own InputRequiredResult driver; its
      elicitation callback answers A: "decline", "cancel", a decision
      ("once", "session", "always", "deny": accepted as {"decision": A}) or
      an object (accepted as the content). Prints "is_error", "text" and
      "asked" (the messages of the elicitations it answered).
  {"tamper": NAME, "args": {...}, "answer": A}
      drives the rounds by hand: gets the InputRequiredResult, answers its
      input requests with A, and retries with one character of the
      requestState changed. Prints the first round's "input_keys" and the
      retry's "error" (or its result).
  {"replay": NAME, "args": {...}, "answer": A}
      as tamper, but retries twice with the state unchanged: prints "first"
      (the result) and "second" (the error).
A step may carry "sample": TEXT: the client then declares sampling (for
every step) and answers sampling requests with TEXT; without any, it
declares none. A JSON-RPC error answer prints {"error": {"code", "message",
"data"}}.
"""
import asyncio
import json
import sys

from mcp import Client, types
from mcp.shared.exceptions import MCPError


def elicit_answer(answer):
    if answer == "decline":
        return types.ElicitResult(action="decline")
    if answer == "cancel":
        return types.ElicitResult(action="cancel")
    if isinstance(answer, dict):
        return types.ElicitResult(action="accept", content=answer)
    return types.ElicitResult(action="accept", content={"decision": answer})


def result_json(r):
    texts = [c.text for c in r.content if getattr(c, "type", "") == "text"]
    return {"is_error": bool(r.is_error), "text": "\n".join(texts)}


def error_json(e):
    return {"error": {"code": e.error.code, "message": e.error.message, "data": e.error.data}}


async def by_hand(client, step, name, retries, tamper):
    session = client.session
    first = await session.call_tool(name, step.get("args", {}), allow_input_required=True)
    if not isinstance(first, types.InputRequiredResult):
        return {"first_round": result_json(first)}
    responses = {}
    for key, request in (first.input_requests or {}).items():
        responses[key] = elicit_answer(step["answer"]).model_dump(mode="json", by_alias=True, exclude_none=True)
    state = first.request_state
    if tamper:
        i = len(state) // 2
        state = state[:i] + ("A" if state[i] != "A" else "B") + state[i + 1:]
    out = {"input_keys": sorted(responses), "rounds": []}
    for _ in range(retries):
        try:
            r = await session.call_tool(name, step.get("args", {}), input_responses=responses,
                                        request_state=state, allow_input_required=True)
            if isinstance(r, types.InputRequiredResult):
                out["rounds"].append({"input_required": sorted(r.input_requests or {})})
            else:
                out["rounds"].append(result_json(r))
        except MCPError as e:
            out["rounds"].append(error_json(e))
    return out


async def main():
    url = sys.argv[1]
    steps = json.loads(sys.stdin.read() or "[]")
    asked = []
    answer = {"now": None}

    async def on_elicit(context, params):
        asked.append(params.message)
        return elicit_answer(answer["now"])

    sampled = []

    async def on_sample(context, params):
        sampled.append(params.model_dump(mode="json", by_alias=True, exclude_none=True))
        return types.CreateMessageResult(role="assistant", model="test-model", stopReason="endTurn",
                                         content=types.TextContent(type="text", text=answer["sample"]))

    callbacks = {"elicitation_callback": on_elicit}
    if len(sys.argv) > 2:
        callbacks["client_info"] = types.Implementation(name=sys.argv[2], version="1.0")
    if any("sample" in s for s in steps):
        callbacks["sampling_callback"] = on_sample
    out = {"steps": []}
    async with Client(url, **callbacks) as client:
        for step in steps:
            answer["sample"] = step.get("sample")
            sampled.clear()
            asked.clear()
            answer["now"] = step.get("answer")
            try:
                if "call" in step:
                    r = await client.call_tool(step["call"], step.get("args", {}))
                    entry = result_json(r)
                    entry["asked"] = list(asked)
                    entry["sampled"] = list(sampled)
                elif "tamper" in step:
                    entry = await by_hand(client, step, step["tamper"], 1, True)
                elif "replay" in step:
                    entry = await by_hand(client, step, step["replay"], 2, False)
                else:
                    raise ValueError(f"unknown step {step}")
            except MCPError as e:
                entry = error_json(e)
            out["steps"].append(entry)
    print(json.dumps(out))


asyncio.run(main())
