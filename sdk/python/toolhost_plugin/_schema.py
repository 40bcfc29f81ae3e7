"""JSON Schema from type hints, descriptions from docstrings, and JSON
arguments checked and converted into the hinted Python types."""

from __future__ import annotations

import dataclasses
import enum
import inspect
import json
import re
import types
import typing
from typing import Any, Optional

from ._errors import InvalidArguments

# Tool and prompt names as the host accepts them (the rule in wit/0.3.0/plugin.wit).
NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

# --- JSON Schema from type hints ---------------------------------------------

_PRIMITIVES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


def is_typeddict(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, dict) and hasattr(hint, "__required_keys__")


def schema_of(hint: Any, where: str) -> dict:
    """The JSON Schema of values of type ``hint``; ``where`` names it in errors."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return {}
    if hint in _PRIMITIVES:
        return {"type": _PRIMITIVES[hint]}
    if origin is typing.Annotated:
        schema = dict(schema_of(args[0], where))
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
        inner = schema_of(options[0], where) if len(options) == 1 else {"anyOf": [schema_of(a, where) for a in options]}
        if len(options) == len(args):
            return inner
        if set(inner) == {"type"} and isinstance(inner["type"], str):
            return {"type": [inner["type"], "null"]}
        return {"anyOf": [inner, {"type": "null"}]}
    if origin in (list, typing.List, set, frozenset):
        return {"type": "array", "items": schema_of(args[0], where) if args else {}}
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": schema_of(args[0], where)}
        items = [schema_of(a, where) for a in args]
        return {"type": "array", "prefixItems": items, "minItems": len(items), "maxItems": len(items)}
    if origin is dict:
        if args and args[0] is not str:
            raise TypeError(f"{where}: JSON object keys are strings, not {args[0]!r}")
        return {"type": "object", "additionalProperties": schema_of(args[1], where) if args else {}}
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
        return object_schema(dataclass_fields(hint), hint.__doc__, where)
    if is_typeddict(hint):
        hints = typing.get_type_hints(hint, include_extras=True)
        fields = [(n, h, n in hint.__required_keys__, None) for n, h in hints.items()]
        return object_schema(fields, hint.__doc__, where)
    raise TypeError(f"{where}: toolhost_plugin cannot describe the type {hint!r} in JSON Schema")


NO_DEFAULT = object()


def dataclass_fields(cls: type) -> list[tuple[str, Any, bool, Any]]:
    hints = typing.get_type_hints(cls, include_extras=True)
    out = []
    for f in dataclasses.fields(cls):
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        default = f.default if f.default is not dataclasses.MISSING else NO_DEFAULT
        out.append((f.name, hints[f.name], required, default))
    return out


def object_schema(fields: list[tuple[str, Any, bool, Any]], doc: Optional[str], where: str, descriptions: Optional[dict] = None) -> dict:
    """An object schema with one property per (name, hint, required, default)."""
    descriptions = descriptions if descriptions is not None else param_docs(doc or "")
    properties, required = {}, []
    for name, hint, is_required, default in fields:
        prop = schema_of(hint, f"{where}.{name}")
        if name in descriptions and "description" not in prop:
            prop["description"] = descriptions[name]
        if default is not NO_DEFAULT and default is not None and _jsonable(default):
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


def description_of(doc: str) -> str:
    """The docstring up to its first section (``Args:``, ``:param``...), cleaned."""
    lines = inspect.cleandoc(doc).splitlines()
    kept = []
    for line in lines:
        if _SECTION.match(line) or line.lstrip().startswith(":"):
            break
        kept.append(line)
    return "\n".join(kept).strip()


def param_docs(doc: str) -> dict[str, str]:
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


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "an array", dict: "an object"}.get(
        type(value), type(value).__name__
    )


def convert(value: Any, hint: Any, path: str) -> Any:
    """``value`` (decoded JSON) as an instance of ``hint``, or :class:`InvalidArguments` naming ``path``."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)

    def wrong(expected: str) -> InvalidArguments:
        return InvalidArguments(f"`{path}` must be {expected}, not {type_name(value)}")

    if hint is Any:
        return value
    if origin is typing.Annotated:
        return convert(value, args[0], path)
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
                return convert(value, option, path)
            except InvalidArguments as e:
                errors.append(str(e))
        raise InvalidArguments(errors[0] if len(errors) == 1 else f"`{path}` matches none of its types: " + "; ".join(errors))
    if origin in (list, typing.List, set, frozenset) or hint in (list, set):
        if not isinstance(value, list):
            raise wrong("an array")
        items = [convert(v, args[0], f"{path}[{i}]") if args else v for i, v in enumerate(value)]
        return items if origin in (list, typing.List, None) else (origin or hint)(items)
    if origin is tuple or hint is tuple:
        if not isinstance(value, list):
            raise wrong("an array")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(convert(v, args[0], f"{path}[{i}]") for i, v in enumerate(value))
        if args and len(value) != len(args):
            raise InvalidArguments(f"`{path}` must have {len(args)} items, not {len(value)}")
        return tuple(convert(v, a, f"{path}[{i}]") for i, (v, a) in enumerate(zip(value, args))) if args else tuple(value)
    if origin is dict or hint is dict:
        if not isinstance(value, dict):
            raise wrong("an object")
        return {k: convert(v, args[1], f"{path}.{k}") for k, v in value.items()} if args else value
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        for member in hint:
            if member.value == value and type(member.value) is type(value):
                return member
        raise InvalidArguments(f"`{path}` must be one of {json.dumps([m.value for m in hint])}, not {json.dumps(value)}")
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        fields = dataclass_fields(hint)
        return hint(**convert_object(value, fields, path))
    if is_typeddict(hint):
        hints = typing.get_type_hints(hint, include_extras=True)
        return convert_object(value, [(n, h, n in hint.__required_keys__, None) for n, h in hints.items()], path)
    raise InvalidArguments(f"`{path}` has a type toolhost_plugin cannot check: {hint!r}")


def convert_object(value: Any, fields: list[tuple[str, Any, bool, Any]], path: str) -> dict:
    """A JSON object checked field by field: no unknown field, every required one present."""
    if not isinstance(value, dict):
        raise InvalidArguments(f"`{path}` must be an object, not {type_name(value)}" if path else f"the arguments must be a JSON object, not {type_name(value)}")
    known = {name for name, *_ in fields}
    for key in value:
        if key not in known:
            allowed = ", ".join(f"`{n}`" for n in sorted(known)) or "none"
            raise InvalidArguments(f"unknown field `{join(path, key)}` (allowed: {allowed})")
    out = {}
    for name, hint, required, _default in fields:
        if name in value:
            out[name] = convert(value[name], hint, join(path, name))
        elif required:
            raise InvalidArguments(f"missing required field `{join(path, name)}`")
    return out


def join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


# --- JSON out ----------------------------------------------------------------


def to_json(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: to_json(v) for k, v in dataclasses.asdict(value).items()}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_json(v) for v in value]
    return value


def dumps(value: Any) -> str:
    """Compact JSON, UTF-8 as it is; NaN and infinities are refused (they are not JSON)."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def signature_fields(f: Any, where: str) -> list[tuple[str, Any, bool, Any]]:
    """(name, hint, required, default) of each parameter of ``f``: ordinary named ones, each with a hint."""
    hints = typing.get_type_hints(f, include_extras=True)
    fields = []
    for p in inspect.signature(f).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            raise TypeError(f"{where}: parameter {p.name} must be an ordinary named parameter")
        if p.name not in hints:
            raise TypeError(f"{where}: parameter {p.name} needs a type hint (its JSON Schema comes from it)")
        default = NO_DEFAULT if p.default is p.empty else p.default
        fields.append((p.name, hints[p.name], p.default is p.empty, default))
    return fields
