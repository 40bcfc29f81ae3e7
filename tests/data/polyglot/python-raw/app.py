"""A Python plugin written against the bindings alone, without toolhost_plugin:
an exception it does not catch is a trap (the tests check that the caller
still gets the Python traceback's message), and it reads its arguments
without checking them (the tests check that the host does, before the call)."""

import json

from wit_world import exports
from wit_world.imports import types

PARAMETERS = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}


class Tool(exports.Tool):
    def list_tools(self) -> list[types.ToolSpec]:
        hints = types.Hints(read_only=True, destructive=None, idempotent=True, open_world=None)
        return [types.ToolSpec("divide", None, "Divides a by b.", json.dumps(PARAMETERS), None, hints)]

    def declare(self) -> types.Capabilities:
        return types.Capabilities(dirs=[], env=[], http=[], secrets=[], tools=[], elicitation=False, sampling=False)

    def call_tool(self, name: str, arguments: str) -> types.ToolOutput:
        args = json.loads(arguments)
        quotient = types.Content_Text(json.dumps(args["a"] / args["b"]))
        return types.ToolOutput(structured=None, content=[types.ContentBlock(quotient, None)])
