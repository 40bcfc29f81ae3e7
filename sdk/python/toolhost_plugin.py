"""Write toolhost plugins in Python: a tool is a typed function.

A plugin module for componentize-py (world ``plugin`` of ``toolhost:plugin@0.2.0``)::

    from toolhost_plugin import Tool, declare, tool

    declare(env=["GREETING"])

    @tool(read_only=True)
    def greet(name: str) -> str:
        \"\"\"Greets someone by name.

        Args:
            name: Who to greet.
        \"\"\"
        return f"Hello, {name}!"

``Tool`` is the class componentize-py looks for in the module (the export of
the ``tool`` interface); importing it is all the wiring there is.

What this module guarantees:

- Each ``@tool`` function's parameters become the tool's JSON Schema (an
  object with ``additionalProperties: false``; a parameter without a default is
  required), from its type hints: ``str``, ``int``, ``float``, ``bool``,
  ``list[T]``, ``tuple[T, ...]``, ``dict[str, T]``, ``T | None``,
  ``Literal[...]``, ``enum.Enum`` subclasses, dataclasses, ``TypedDict``\\ s,
  ``Any``, and ``Annotated[T, "description"]`` or ``Annotated[T, {schema}]``.
  The first paragraphs of the docstring are the description; the ``Args:``
  section (or ``:param name:`` lines) describes the parameters. A hint it
  cannot express fails the build (the module is imported when the component
  is built), naming the tool and the parameter.
- Arguments are checked against the hints before the function runs (the
  host checks them against the schema too); a mismatch is an
  ``invalid-arguments`` error naming the field. Dataclass and enum parameters
  arrive as instances.
- A return value becomes the call's JSON (dataclasses as objects); return
  :class:`Output` to add the text the model should read. A dataclass or
  ``TypedDict`` return annotation becomes the tool's output schema.
- ``ValueError`` (and :class:`InvalidArguments`) becomes ``invalid-arguments``
  with its message; any other ``Exception`` becomes ``failed`` with its type
  and message (:class:`ToolFailed`: the message alone), and its traceback is
  written to stderr, which the host captures into its log.
- :func:`call` and :func:`call_many` call other tools through the host (they
  must be declared with ``declare(tools=[...])`` and granted);
  :func:`progress` reports progress; :func:`log` writes to the host's log.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import json
import re
import sys
import traceback
import types
import typing
from typing import Any, Callable, Optional

from componentize_py_types import Err, Ok
from wit_world.imports import host as _host
from wit_world.imports import progress as _progress
from wit_world.imports import tools as _tools
from wit_world.imports import types as _wit

__all__ = [
    "CallError",
    "InvalidArguments",
    "Output",
    "Tool",
    "ToolFailed",
    "call",
    "call_many",
    "declare",
    "log",
    "progress",
    "tool",
]

# Tool names as the host accepts them (the rule in wit/0.2.0/plugin.wit).
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class InvalidArguments(ValueError):
    """The arguments do not fit the tool: becomes ``invalid-arguments``."""


class ToolFailed(Exception):
    """The tool could not do its work: becomes ``failed`` with this message alone."""


class CallError(Exception):
    """A nested call (:func:`call`, :func:`call_many`) did not produce a result.

    ``code`` is the host's error code (``invalid_arguments``,
    ``capability_not_granted``, ``unknown_tool``, ``timeout``, ``tool_failed``, ...).
    """

    def __init__(self, tool: str, code: str, message: str):
        super().__init__(f"calling {tool} failed ({code}): {message}")
        self.tool = tool
        self.code = code
        self.message = message


_T = typing.TypeVar("_T")


@dataclasses.dataclass
class Output(typing.Generic[_T]):
    """A tool's result with the text the model should read besides its JSON.

    Annotate a tool ``-> Output[Stats]`` to give it ``Stats``'s output schema.
    """

    value: _T
    """Any JSON-serializable value (dataclasses included): the structured result."""
    text: Optional[str] = None
    """The text for the model; ``None`` shows the JSON (a string without quotes)."""


# --- capabilities -----------------------------------------------------------

_CAPABILITIES: dict[str, list[str]] = {
    "dirs": [],
    "env": [],
    "http": [],
    "secrets": [],
    "tools": [],
}


def declare(
    *,
    env: typing.Iterable[str] = (),
    dirs: typing.Iterable[str] = (),
    http: typing.Iterable[str] = (),
    secrets: typing.Iterable[str] = (),
    tools: typing.Iterable[str] = (),
) -> None:
    """Declares capabilities the plugin asks for (adds to earlier declarations).

    ``env``: environment variable names; ``dirs``: guest paths of directories
    (``/workspace``); ``http``: host patterns (``api.example.com``,
    ``*.example.com``); ``secrets``: secret names; ``tools``: names of tools it
    calls. A capability is usable only when declared here *and* granted by the
    operator.
    """
    for kind, names in (("env", env), ("dirs", dirs), ("http", http), ("secrets", secrets), ("tools", tools)):
        if isinstance(names, str):
            raise TypeError(f"declare({kind}=...) takes a list of strings, not the string {names!r}")
        for name in names:
            if not isinstance(name, str) or not name:
                raise TypeError(f"declare({kind}=...): {name!r} is not a non-empty string")
            if name not in _CAPABILITIES[kind]:
                _CAPABILITIES[kind].append(name)


# --- JSON Schema from type hints ---------------------------------------------

_PRIMITIVES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


def _is_typeddict(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, dict) and hasattr(hint, "__required_keys__")


def _schema(hint: Any, where: str) -> dict:
    """The JSON Schema of values of type ``hint``; ``where`` names it in errors."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return {}
    if hint in _PRIMITIVES:
        return {"type": _PRIMITIVES[hint]}
    if origin is typing.Annotated:
        schema = dict(_schema(args[0], where))
        for extra in args[1:]:
            if isinstance(extra, str):
                schema["description"] = extra
            elif isinstance(extra, dict):
                schema.update(extra)
        return schema
    if origin is typing.Literal:
        kinds = {_PRIMITIVES.get(type(a)) for a in args}
        schema: dict = {"enum": list(args)}
        if len(kinds) == 1 and None not in kinds:
            schema["type"] = kinds.pop()
        return schema
    if origin in (typing.Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        inner = _schema(options[0], where) if len(options) == 1 else {"anyOf": [_schema(a, where) for a in options]}
        if len(options) == len(args):
            return inner
        if set(inner) == {"type"} and isinstance(inner["type"], str):
            return {"type": [inner["type"], "null"]}
        return {"anyOf": [inner, {"type": "null"}]}
    if origin in (list, typing.List, set, frozenset):
        return {"type": "array", "items": _schema(args[0], where) if args else {}}
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": _schema(args[0], where)}
        items = [_schema(a, where) for a in args]
        return {"type": "array", "prefixItems": items, "minItems": len(items), "maxItems": len(items)}
    if origin is dict:
        if args and args[0] is not str:
            raise TypeError(f"{where}: JSON object keys are strings, not {args[0]!r}")
        return {"type": "object", "additionalProperties": _schema(args[1], where) if args else {}}
    if hint in (list, tuple, set):
        return {"type": "array"}
    if hint is dict:
        return {"type": "object"}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        values = [m.value for m in hint]
        schema = {"enum": values}
        kinds = {_PRIMITIVES.get(type(v)) for v in values}
        if len(kinds) == 1 and None not in kinds:
            schema["type"] = kinds.pop()
        return schema
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return _object_schema(_dataclass_fields(hint), hint.__doc__, where)
    if _is_typeddict(hint):
        hints = typing.get_type_hints(hint, include_extras=True)
        fields = [(n, h, n in hint.__required_keys__, None) for n, h in hints.items()]
        return _object_schema(fields, hint.__doc__, where)
    raise TypeError(f"{where}: toolhost_plugin cannot describe the type {hint!r} in JSON Schema")


_NO_DEFAULT = object()


def _dataclass_fields(cls: type) -> list[tuple[str, Any, bool, Any]]:
    hints = typing.get_type_hints(cls, include_extras=True)
    out = []
    for f in dataclasses.fields(cls):
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        default = f.default if f.default is not dataclasses.MISSING else _NO_DEFAULT
        out.append((f.name, hints[f.name], required, default))
    return out


def _object_schema(fields: list[tuple[str, Any, bool, Any]], doc: Optional[str], where: str, descriptions: Optional[dict] = None) -> dict:
    """An object schema with one property per (name, hint, required, default)."""
    descriptions = descriptions if descriptions is not None else _param_docs(doc or "")
    properties, required = {}, []
    for name, hint, is_required, default in fields:
        prop = _schema(hint, f"{where}.{name}")
        if name in descriptions and "description" not in prop:
            prop["description"] = descriptions[name]
        if default is not _NO_DEFAULT and default is not None and _jsonable(default):
            prop["default"] = default.value if isinstance(default, enum.Enum) else default
        properties[name] = prop
        if is_required:
            required.append(name)
    schema: dict = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value.value if isinstance(value, enum.Enum) else value)
        return True
    except (TypeError, ValueError):
        return False


# --- docstrings ---------------------------------------------------------------

_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Params|Returns|Return|Raises|Yields|Examples?|Notes?)\s*:\s*$")
_PARAM_LINE = re.compile(r"^(\s*)\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_REST_PARAM = re.compile(r"^\s*:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")


def _description(doc: str) -> str:
    """The docstring up to its first section (``Args:``, ``:param``...), cleaned."""
    lines = inspect.cleandoc(doc).splitlines()
    kept = []
    for line in lines:
        if _SECTION.match(line) or line.lstrip().startswith(":"):
            break
        kept.append(line)
    return "\n".join(kept).strip()


def _param_docs(doc: str) -> dict[str, str]:
    """Parameter descriptions from a Google-style ``Args:`` section or reST ``:param x:`` lines."""
    docs: dict[str, str] = {}
    lines = inspect.cleandoc(doc).splitlines()
    in_args, current, indent = False, None, None
    for line in lines:
        rest = _REST_PARAM.match(line)
        if rest:
            current, in_args = rest.group(1), False
            docs[current] = rest.group(2).strip()
            continue
        section = _SECTION.match(line)
        if section:
            in_args = section.group(1) in ("Args", "Arguments", "Parameters", "Params")
            current, indent = None, None
            continue
        if not line.strip():
            continue
        if in_args:
            m = _PARAM_LINE.match(line)
            if m and (indent is None or len(m.group(1)) <= indent):
                indent = len(m.group(1))
                current = m.group(2)
                docs[current] = m.group(3).strip()
                continue
        if current is not None and (in_args or line.startswith((" ", "\t"))):
            docs[current] = (docs[current] + " " + line.strip()).strip()
    return docs


# --- arguments: JSON values into the hinted Python types -----------------------


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "an array", dict: "an object"}.get(
        type(value), type(value).__name__
    )


def _convert(value: Any, hint: Any, path: str) -> Any:
    """``value`` (decoded JSON) as an instance of ``hint``, or :class:`InvalidArguments` naming ``path``."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)

    def wrong(expected: str) -> InvalidArguments:
        return InvalidArguments(f"`{path}` must be {expected}, not {_type_name(value)}")

    if hint is Any:
        return value
    if origin is typing.Annotated:
        return _convert(value, args[0], path)
    if hint is type(None):
        if value is not None:
            raise wrong("null")
        return None
    if hint is bool:
        if not isinstance(value, bool):
            raise wrong("a boolean")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float) and not value.is_integer()):
            raise wrong("an integer")
        return int(value)
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise wrong("a number")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise wrong("a string")
        return value
    if origin is typing.Literal:
        if not any(type(a) is type(value) and a == value for a in args):
            raise InvalidArguments(f"`{path}` must be one of {json.dumps(list(args))}, not {json.dumps(value)}")
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for option in (a for a in args if a is not type(None)):
            try:
                return _convert(value, option, path)
            except InvalidArguments as e:
                errors.append(str(e))
        raise InvalidArguments(errors[0] if len(errors) == 1 else f"`{path}` matches none of its types: " + "; ".join(errors))
    if origin in (list, typing.List, set, frozenset) or hint in (list, set):
        if not isinstance(value, list):
            raise wrong("an array")
        items = [_convert(v, args[0], f"{path}[{i}]") if args else v for i, v in enumerate(value)]
        return items if origin in (list, typing.List, None) else (origin or hint)(items)
    if origin is tuple or hint is tuple:
        if not isinstance(value, list):
            raise wrong("an array")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(v, args[0], f"{path}[{i}]") for i, v in enumerate(value))
        if args and len(value) != len(args):
            raise InvalidArguments(f"`{path}` must have {len(args)} items, not {len(value)}")
        return tuple(_convert(v, a, f"{path}[{i}]") for i, (v, a) in enumerate(zip(value, args))) if args else tuple(value)
    if origin is dict or hint is dict:
        if not isinstance(value, dict):
            raise wrong("an object")
        return {k: _convert(v, args[1], f"{path}.{k}") for k, v in value.items()} if args else value
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        for member in hint:
            if member.value == value and type(member.value) is type(value):
                return member
        raise InvalidArguments(f"`{path}` must be one of {json.dumps([m.value for m in hint])}, not {json.dumps(value)}")
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        fields = _dataclass_fields(hint)
        return hint(**_convert_object(value, fields, path))
    if _is_typeddict(hint):
        hints = typing.get_type_hints(hint, include_extras=True)
        return _convert_object(value, [(n, h, n in hint.__required_keys__, None) for n, h in hints.items()], path)
    raise InvalidArguments(f"`{path}` has a type toolhost_plugin cannot check: {hint!r}")


def _convert_object(value: Any, fields: list[tuple[str, Any, bool, Any]], path: str) -> dict:
    """A JSON object checked field by field: no unknown field, every required one present."""
    if not isinstance(value, dict):
        raise InvalidArguments(f"`{path}` must be an object, not {_type_name(value)}" if path else f"the arguments must be a JSON object, not {_type_name(value)}")
    known = {name for name, *_ in fields}
    for key in value:
        if key not in known:
            allowed = ", ".join(f"`{n}`" for n in sorted(known)) or "none"
            raise InvalidArguments(f"unknown field `{_join(path, key)}` (allowed: {allowed})")
    out = {}
    for name, hint, required, _default in fields:
        if name in value:
            out[name] = _convert(value[name], hint, _join(path, name))
        elif required:
            raise InvalidArguments(f"missing required field `{_join(path, name)}`")
    return out


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


# --- results ------------------------------------------------------------------


def _to_json(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: _to_json(v) for k, v in dataclasses.asdict(value).items()}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): _to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_to_json(v) for v in value]
    return value


def _dumps(value: Any) -> str:
    """Compact JSON, UTF-8 as it is; NaN and infinities are refused (they are not JSON)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _output(value: Any) -> _wit.ToolOutput:
    text = None
    if isinstance(value, Output):
        value, text = value.value, value.text
        if text is not None and not isinstance(text, str):
            raise TypeError(f"Output.text must be a string or None, not {type(text).__name__}")
    return _wit.ToolOutput(json=_dumps(_to_json(value)), text=text)


# --- tools ------------------------------------------------------------------


@dataclasses.dataclass
class _Spec:
    name: str
    func: Callable[..., Any]
    fields: list[tuple[str, Any, bool, Any]]
    spec: _wit.ToolSpec


_TOOLS: dict[str, _Spec] = {}


def tool(
    func: Optional[Callable[..., Any]] = None,
    *,
    name: Optional[str] = None,
    description: Optional[str] = None,
    read_only: Optional[bool] = None,
    destructive: Optional[bool] = None,
    idempotent: Optional[bool] = None,
    open_world: Optional[bool] = None,
    output_schema: Optional[dict] = None,
) -> Any:
    """Registers a typed function as a tool (``@tool`` or ``@tool(read_only=True, ...)``).

    ``name`` defaults to the function's name, ``description`` to its
    docstring; the hints are MCP's tool annotations (``None``: not stated);
    ``output_schema`` overrides the one taken from a dataclass or
    ``TypedDict`` return annotation. Raises ``TypeError`` (failing the build)
    for a name the host would refuse, a duplicate, a missing description, or a
    parameter whose type cannot be described.
    """

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        tool_name = name or f.__name__
        where = f"tool {tool_name}"
        if not _NAME.match(tool_name):
            raise TypeError(f"{where}: a tool name is 1 to 64 characters from A-Z a-z 0-9 _ -")
        if tool_name in _TOOLS:
            raise TypeError(f"{where}: a tool of this name is already registered")
        doc = f.__doc__ or ""
        desc = description if description is not None else _description(doc)
        if not desc.strip():
            raise TypeError(f"{where}: give it a docstring (or description=...): the model reads it to decide when to call the tool")
        hints = typing.get_type_hints(f, include_extras=True)
        fields = []
        for p in inspect.signature(f).parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
                raise TypeError(f"{where}: parameter {p.name} must be an ordinary named parameter")
            if p.name not in hints:
                raise TypeError(f"{where}: parameter {p.name} needs a type hint (its JSON Schema comes from it)")
            default = _NO_DEFAULT if p.default is p.empty else p.default
            fields.append((p.name, hints[p.name], p.default is p.empty, default))
        parameters = _object_schema(fields, doc, where)
        out_schema = output_schema
        returns = hints.get("return")
        if typing.get_origin(returns) is Output:
            returns = typing.get_args(returns)[0]
        if out_schema is None and returns is not None and (
            (dataclasses.is_dataclass(returns) and isinstance(returns, type)) or _is_typeddict(returns)
        ):
            out_schema = _schema(returns, f"{where} (return type)")
        spec = _wit.ToolSpec(
            name=tool_name,
            description=desc,
            parameters=_dumps(parameters),
            output_schema=None if out_schema is None else _dumps(out_schema),
            hints=_wit.Hints(read_only=read_only, destructive=destructive, idempotent=idempotent, open_world=open_world),
        )
        _TOOLS[tool_name] = _Spec(tool_name, f, fields, spec)
        return f

    return register(func) if func is not None else register


def _failure(e: BaseException) -> Err:
    if isinstance(e, ValueError):
        return Err(_wit.ToolError_InvalidArguments(str(e) or type(e).__name__))
    traceback.print_exception(e, file=sys.stderr)
    if isinstance(e, ToolFailed):
        return Err(_wit.ToolError_Failed(str(e)))
    message = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    return Err(_wit.ToolError_Failed(message))


class Tool:
    """The export of the ``tool`` interface: lists, declares and calls the ``@tool`` functions.

    componentize-py instantiates it; a plugin module only imports it.
    """

    def list_tools(self) -> list[_wit.ToolSpec]:
        return [t.spec for t in _TOOLS.values()]

    def declare(self) -> _wit.Capabilities:
        return _wit.Capabilities(**{k: list(v) for k, v in _CAPABILITIES.items()})

    def call_tool(self, name: str, arguments: str) -> _wit.ToolOutput:
        entry = _TOOLS.get(name)
        if entry is None:
            raise Err(_wit.ToolError_InvalidArguments(f"this plugin has no tool named {name!r}"))
        try:
            try:
                args = json.loads(arguments)
            except json.JSONDecodeError as e:
                raise InvalidArguments(f"the arguments are not JSON: {e}") from None
            result = entry.func(**_convert_object(args, entry.fields, ""))
        except Exception as e:  # every exception is the tool's answer, never a trap
            raise _failure(e) from None
        try:
            return _output(result)
        except (TypeError, ValueError) as e:
            raise Err(_wit.ToolError_Failed(f"the result of {name} cannot be sent as JSON: {e}")) from None


# --- host services --------------------------------------------------------------


def _decoded(tool_name: str, result: Any) -> Any:
    try:
        return json.loads(result.json)
    except json.JSONDecodeError as e:
        raise CallError(tool_name, "invalid_result", f"the result is not JSON: {e}") from None


def call(name: str, arguments: Optional[dict] = None, /, **kwargs: Any) -> Any:
    """Calls tool ``name`` through the host and returns its JSON result, decoded.

    Arguments come as a dict or as keywords. Raises :class:`CallError` (with the
    host's ``code``) when the call fails: not declared, not granted, invalid
    arguments, the tool's own failure... Uncaught, it fails the calling tool
    with that message.
    """
    payload = dict(arguments or {}, **kwargs)
    try:
        return _decoded(name, _tools.call(name, _dumps(_to_json(payload))))
    except Err as e:
        raise CallError(name, e.value.code, e.value.message) from None


def call_many(calls: typing.Iterable[tuple[str, dict]]) -> list[Any]:
    """Runs several ``(name, arguments)`` calls at once; returns each result in order.

    A call that failed is a :class:`CallError` in its place (not raised), so the
    others' results are kept.
    """
    calls = list(calls)
    batch = [_tools.ToolCall(name=n, arguments=_dumps(_to_json(a or {}))) for n, a in calls]
    results = []
    for (name, _), result in zip(calls, _tools.call_many(batch)):
        if isinstance(result, Ok):
            try:
                results.append(_decoded(name, result.value))
            except CallError as e:
                results.append(e)
        else:
            results.append(CallError(name, result.value.code, result.value.message))
    return results


def progress(done: float, total: Optional[float] = None, message: Optional[str] = None) -> None:
    """Reports that ``done`` units of ``total`` are finished (MCP progress); never fails."""
    _progress.report(float(done), None if total is None else float(total), message)


_LEVELS = {level.name.lower(): level for level in _host.Level}


def log(level: str, message: str, **fields: Any) -> None:
    """Writes a record into the host's log: ``level`` is trace, debug, info, warn or error."""
    if level not in _LEVELS:
        raise ValueError(f"log level {level!r} is not one of {', '.join(_LEVELS)}")
    _host.log(_LEVELS[level], message, [(k, v if isinstance(v, str) else _dumps(_to_json(v))) for k, v in fields.items()])
