"""Tools: ``@tool`` functions, the capabilities the plugin declares, and the
``tool`` export that lists, declares and calls them."""

from __future__ import annotations

import dataclasses
import json
import sys
import traceback
import typing
from typing import Any, Callable, Optional

from componentize_py_types import Err

from . import _bindings as wit
from ._content import BLOCKS, Output, output_to_wit
from ._errors import InvalidArguments, ToolFailed
from ._schema import NAME, convert_object, description_of, dumps, is_typeddict, object_schema, schema_of, signature_fields

# --- capabilities -----------------------------------------------------------

_CAPABILITIES: dict[str, Any] = {
    "dirs": [],
    "env": [],
    "http": [],
    "secrets": [],
    "tools": [],
    "elicitation": False,
    "sampling": False,
}
# What the `declare()` record cannot carry: the lines of the component's
# `toolhost:capabilities` section (`client roots`, `task TOOL SUPPORT`),
# which toolhost_build.py reads from the plugin's source and appends.
_SECTION: list[str] = []

TASK_SUPPORT = ("optional", "required")


def declare(
    *,
    env: typing.Iterable[str] = (),
    dirs: typing.Iterable[str] = (),
    http: typing.Iterable[str] = (),
    secrets: typing.Iterable[str] = (),
    tools: typing.Iterable[str] = (),
    elicitation: bool = False,
    sampling: bool = False,
    roots: bool = False,
) -> None:
    """Declares capabilities the plugin asks for (adds to earlier declarations).

    ``env``: environment variable names; ``dirs``: guest paths of directories
    (``/workspace``); ``http``: host patterns (``api.example.com``,
    ``*.example.com``); ``secrets``: secret names; ``tools``: names of tools it
    calls; ``elicitation``: it asks the user questions (:func:`elicit`);
    ``sampling``: it asks the client's model (:func:`sample`); ``roots``: it
    lists the client's roots (:func:`list_roots`). A capability is usable
    only when declared here *and* granted by the operator.

    ``roots`` goes into the component's ``toolhost:capabilities`` section
    (the ``declare()`` record has no field for it), which the build writes
    from the plugin's source: write it as ``roots=True`` in a call at module
    level, or the build fails, saying so.

    Raises ``TypeError`` (failing the build) for a malformed declaration, or
    one this component could never use: tools without the ``tools`` import,
    elicitation, sampling or roots without the ``client`` import (the build
    adds each when a module of the plugin uses :func:`call`, :func:`elicit`...).
    """
    for kind, names in (("env", env), ("dirs", dirs), ("http", http), ("secrets", secrets), ("tools", tools)):
        if isinstance(names, str):
            raise TypeError(f"declare({kind}=...) takes a list of strings, not the string {names!r}")
        for name in names:
            if not isinstance(name, str) or not name:
                raise TypeError(f"declare({kind}=...): {name!r} is not a non-empty string")
            if name not in _CAPABILITIES[kind]:
                _CAPABILITIES[kind].append(name)
    for kind, flag in (("elicitation", elicitation), ("sampling", sampling), ("roots", roots)):
        if not isinstance(flag, bool):
            raise TypeError(f"declare({kind}=...) takes True or False, not {flag!r}")
    _CAPABILITIES["elicitation"] = _CAPABILITIES["elicitation"] or elicitation
    _CAPABILITIES["sampling"] = _CAPABILITIES["sampling"] or sampling
    if roots and "client roots" not in _SECTION:
        _SECTION.append("client roots")
    if _CAPABILITIES["tools"] and wit.tools is None:
        raise TypeError(
            "declare(tools=...): this component does not import toolhost:plugin/tools, "
            "since no module of the plugin imports call or call_many from toolhost_plugin"
        )
    for kind, uses, wanted in (
        ("elicitation", "elicit", _CAPABILITIES["elicitation"]),
        ("sampling", "sample", _CAPABILITIES["sampling"]),
        ("roots", "list_roots", roots),
    ):
        if wanted and wit.client is None:
            raise TypeError(
                f"declare({kind}=True): this component does not import toolhost:plugin/client, "
                f"since no module of the plugin imports {uses} from toolhost_plugin"
            )


# --- tools ------------------------------------------------------------------


@dataclasses.dataclass
class _Spec:
    name: str
    func: Callable[..., Any]
    fields: list[tuple[str, Any, bool, Any]]
    spec: Any


_TOOLS: dict[str, _Spec] = {}


def tool(
    func: Optional[Callable[..., Any]] = None,
    *,
    name: Optional[str] = None,
    title: Optional[str] = None,
    description: Optional[str] = None,
    read_only: Optional[bool] = None,
    destructive: Optional[bool] = None,
    idempotent: Optional[bool] = None,
    open_world: Optional[bool] = None,
    output_schema: Optional[dict] = None,
    task: Optional[str] = None,
    deferred: bool = False,
) -> Any:
    """Registers a typed function as a tool (``@tool`` or ``@tool(read_only=True, ...)``).

    ``name`` defaults to the function's name, ``description`` to its
    docstring; ``title`` is a short title for people (MCP ``title``); the
    hints are MCP's tool annotations (``None``: not stated);
    ``output_schema`` overrides the one taken from a dataclass or
    ``TypedDict`` return annotation. Raises ``TypeError`` (failing the build)
    for a name the host would refuse, a duplicate, a missing description, or a
    parameter whose type cannot be described.

    ``task`` lets an MCP server run the tool's calls as tasks (MCP's tasks
    extension; not a capability, no grant needed): ``"optional"`` for a
    client that supports tasks, ``"required"`` only as tasks.
    ``deferred=True`` (with ``task``) makes the call a task only when the
    tool calls :func:`begin_task`, once it has asked for its inputs. These
    go into the component's ``toolhost:capabilities`` section, which the
    build writes from the plugin's source: write them (and ``name``, if
    given) as literals in the decorator.
    """

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        tool_name = name or f.__name__
        where = f"tool {tool_name}"
        if not NAME.match(tool_name):
            raise TypeError(f"{where}: a tool name is 1 to 64 characters from A-Z a-z 0-9 _ -")
        if tool_name in _TOOLS:
            raise TypeError(f"{where}: a tool of this name is already registered")
        if title is not None and not isinstance(title, str):
            raise TypeError(f"{where}: title must be a string")
        line = task_line(tool_name, task, deferred, where)
        doc = f.__doc__ or ""
        desc = description if description is not None else description_of(doc)
        if not desc.strip():
            raise TypeError(f"{where}: give it a docstring (or description=...): the model reads it to decide when to call the tool")
        fields = signature_fields(f, where)
        parameters = object_schema(fields, doc, where)
        out_schema = output_schema
        returns = typing.get_type_hints(f, include_extras=True).get("return")
        if returns is Output or returns in BLOCKS:
            returns = None
        elif typing.get_origin(returns) is Output:
            returns = typing.get_args(returns)[0]
        if out_schema is None and returns is not None and (
            (dataclasses.is_dataclass(returns) and isinstance(returns, type)) or is_typeddict(returns)
        ):
            out_schema = schema_of(returns, f"{where} (return type)")
        spec = wit.types.ToolSpec(
            name=tool_name,
            title=title,
            description=desc,
            parameters=dumps(parameters),
            output_schema=None if out_schema is None else dumps(out_schema),
            hints=wit.types.Hints(read_only=read_only, destructive=destructive, idempotent=idempotent, open_world=open_world),
        )
        _TOOLS[tool_name] = _Spec(tool_name, f, fields, spec)
        if line is not None:
            _SECTION.append(line)
        return f

    return register(func) if func is not None else register


def task_line(tool_name: str, task: Optional[str], deferred: bool, where: str) -> Optional[str]:
    """The section line of a tool's task support (``task NAME optional deferred``), if it states one."""
    if not isinstance(deferred, bool):
        raise TypeError(f"{where}: deferred takes True or False, not {deferred!r}")
    if task is None:
        if deferred:
            raise TypeError(f'{where}: deferred=True needs task="optional" or task="required"')
        return None
    if task not in TASK_SUPPORT:
        raise TypeError(f"{where}: task is {' or '.join(map(repr, TASK_SUPPORT))}, not {task!r}")
    if deferred and wit.client is None:
        raise TypeError(
            f"{where}: deferred=True, but this component does not import toolhost:plugin/client, "
            "since no module of the plugin imports begin_task from toolhost_plugin"
        )
    return f"task {tool_name} {task}" + (" deferred" if deferred else "")


def check_section(read: str) -> None:
    """Checks the section lines toolhost_build.py read from the plugin's
    source (``read``, one a line) against what the plugin declared when it
    ran (at build time): the section must say what the plugin does."""
    wanted, got = sorted(read.splitlines()), sorted(_SECTION)
    if wanted != got:

        def lines(section: list[str]) -> str:
            return ", ".join(f"`{line}`" for line in section) or "nothing"

        raise TypeError(
            f"toolhost_build.py read {lines(wanted)} from the plugin's source for its toolhost:capabilities "
            f"section, but the plugin declared {lines(got)} when it ran: "
            "write declare(roots=True) and @tool(task=..., deferred=..., name=...) with literal values, "
            "at module level, so the build can read them without running the plugin"
        )


def failure(e: BaseException) -> Err:
    """An exception raised by a tool or prompt as its ``tool-error``."""
    if isinstance(e, ValueError):
        return Err(wit.types.ToolError_InvalidArguments(str(e) or type(e).__name__))
    traceback.print_exception(e, file=sys.stderr)
    if isinstance(e, ToolFailed):
        return Err(wit.types.ToolError_Failed(str(e)))
    message = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    return Err(wit.types.ToolError_Failed(message))


class Tool:
    """The export of the ``tool`` interface: lists, declares and calls the ``@tool`` functions.

    componentize-py instantiates it; ``toolhost_build.py`` exports it for the
    plugin (a plugin module built otherwise imports it).
    """

    def list_tools(self) -> list[Any]:
        return [t.spec for t in _TOOLS.values()]

    def declare(self) -> Any:
        caps = {k: (list(v) if isinstance(v, list) else v) for k, v in _CAPABILITIES.items()}
        return wit.types.Capabilities(**caps)

    def call_tool(self, name: str, arguments: str) -> Any:
        entry = _TOOLS.get(name)
        if entry is None:
            raise Err(wit.types.ToolError_InvalidArguments(f"this plugin has no tool named {name!r}"))
        try:
            try:
                args = json.loads(arguments)
            except json.JSONDecodeError as e:
                raise InvalidArguments(f"the arguments are not JSON: {e}") from None
            result = entry.func(**convert_object(args, entry.fields, ""))
        except Exception as e:  # every exception is the tool's answer, never a trap
            raise failure(e) from None
        try:
            return output_to_wit(result, f"the result of {name}")
        except (TypeError, ValueError) as e:
            raise Err(wit.types.ToolError_Failed(f"the result of {name} cannot be sent: {e}")) from None
