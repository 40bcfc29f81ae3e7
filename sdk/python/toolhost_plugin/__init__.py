"""Write toolhost plugins in Python: a tool, a prompt, a resource is a typed function.

A plugin module for ``toolhost_build.py`` (which runs componentize-py
against ``toolhost:plugin@0.3.1``)::

    from toolhost_plugin import Image, declare, elicit, log, prompt, resource, tool

    declare(elicitation=True)

    @tool(read_only=True)
    def greet(name: str) -> str:
        \"\"\"Greets someone by name.

        Args:
            name: Who to greet.
        \"\"\"
        log("info", "greeting", name=name)
        return f"Hello, {name}!"

    @prompt
    def review(code: str) -> str:
        \"\"\"Asks for a review of some code.\"\"\"
        return f"Please review:\\n{code}"

    @resource("notes://readme", mime_type="text/plain")
    def readme() -> str:
        \"\"\"The notes' README.\"\"\"
        return "Notes live here."

The map of this package:

- tools: :func:`tool`, :func:`declare`, :class:`Output`, and the content
  blocks a tool may return (:class:`Text`, :class:`Image`, :class:`Audio`,
  :class:`ResourceLink`, :class:`TextResource` and :class:`BlobResource`
  for embedded resources, each with :class:`Annotations`);
- prompts and resources: :func:`prompt`, :func:`resource`,
  :func:`resource_template`, with :class:`Message`, :class:`PromptResult`
  and :class:`Completion`;
- services of the host: :func:`log`, :func:`progress`, :func:`call`,
  :func:`call_many`;
- the client of the call: :func:`elicit` (:class:`Elicitation`),
  :func:`sample` (:class:`Sampled`), :func:`list_roots` (:class:`Root`),
  several questions in one round with :func:`ask` (:class:`Question`),
  what it can be asked (:func:`available`, :class:`Available`), and
  :func:`begin_task`;
- errors: :class:`InvalidArguments` and :class:`ToolFailed` (raised by a
  tool), :class:`ResourceNotFound` (by a resource read), and
  :class:`HostError` with :class:`CallError` and :class:`ClientError` (raised
  by the host's services);
- the exports componentize-py instantiates: :class:`Tool`, :class:`Prompts`,
  :class:`Resources` (``toolhost_build.py`` exports them for the plugin).

What this package guarantees:

- Each ``@tool`` function's parameters become the tool's JSON Schema (an
  object with ``additionalProperties: false``; a parameter without a default is
  required), from its type hints: ``str``, ``int``, ``float``, ``bool``,
  ``list[T]``, ``tuple[T, ...]``, ``dict[str, T]``, ``T | None``,
  ``Literal[...]``, ``enum.Enum`` subclasses, dataclasses, ``TypedDict``\\ s,
  ``Any``, and ``Annotated[T, "description"]`` or ``Annotated[T, {schema}]``.
  The first paragraphs of the docstring are the description; the ``Args:``
  section (or ``:param name:`` lines) describes the parameters. A hint it
  cannot express fails the build (the module is imported when the component
  is built), naming the tool and the parameter; so do a prompt's non-string
  argument, a URI the host would refuse, and a template whose variables are
  not the function's parameters.
- Arguments are checked against the hints before the function runs (the
  host checks them against the schema too); a mismatch is an
  ``invalid-arguments`` error naming the field. Dataclass and enum parameters
  arrive as instances.
- A JSON object returned (a dict, a dataclass) is the structured result
  (MCP ``structuredContent``); a string is the text the model reads; a content
  block or a list of them is the content; :class:`Output` gives structured
  JSON, text and blocks together; another JSON value (a number, a list) is
  the structured result ``{"result": value}`` with its JSON as text. A
  dataclass or ``TypedDict`` return annotation becomes the tool's output
  schema.
- ``ValueError`` (and :class:`InvalidArguments`) becomes ``invalid-arguments``
  with its message; any other ``Exception`` becomes ``failed`` with its type
  and message (:class:`ToolFailed`: the message alone), and its traceback is
  written to stderr, which the host captures into its log. Prompts answer
  the same way; resource reads answer ``not-found`` for
  :class:`ResourceNotFound` and ``failed`` otherwise. An exception never traps.
- The component imports only the host interfaces the plugin uses: a plugin
  that never asks its client anything does not import
  ``toolhost:plugin/client``.
- What the ``declare()`` record cannot carry (``declare(roots=True)``, a
  tool's ``task=...``) is in the component's ``toolhost:capabilities``
  section: ``toolhost_build.py`` reads it from the plugin's source and
  checks it against what the plugin declared when it ran.
"""

from ._catalog import Completion, PromptResult, Prompts, Resources, prompt, resource, resource_template
from ._content import Annotations, Audio, BlobResource, Image, Output, ResourceLink, Text, TextResource
from ._client import (
    Available,
    Elicitation,
    Message,
    Question,
    Root,
    Sampled,
    ask,
    available,
    begin_task,
    elicit,
    list_roots,
    sample,
)
from ._errors import CallError, ClientError, HostError, InvalidArguments, ResourceNotFound, ToolFailed
from ._host import call, call_many, log, progress
from ._tools import Tool, declare, tool

__all__ = [
    "Annotations",
    "Audio",
    "Available",
    "BlobResource",
    "CallError",
    "ClientError",
    "Completion",
    "Elicitation",
    "HostError",
    "Image",
    "InvalidArguments",
    "Message",
    "Output",
    "PromptResult",
    "Prompts",
    "Question",
    "ResourceLink",
    "ResourceNotFound",
    "Resources",
    "Root",
    "Sampled",
    "Text",
    "TextResource",
    "Tool",
    "ToolFailed",
    "ask",
    "available",
    "begin_task",
    "call",
    "call_many",
    "declare",
    "elicit",
    "list_roots",
    "log",
    "progress",
    "prompt",
    "resource",
    "resource_template",
    "sample",
    "tool",
]
