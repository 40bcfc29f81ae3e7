"""Prompts and resources (MCP's), with completions for their arguments, and
the ``prompts`` and ``resources`` exports that serve them."""

from __future__ import annotations

import dataclasses
import enum
import inspect
import re
import sys
import traceback
import typing
import unicodedata
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

from componentize_py_types import Err

from . import _bindings as wit
from ._content import BLOCKS, Annotations, BlobResource, Block, TextResource, annotations_to_wit, resource_contents_to_wit
from ._errors import InvalidArguments, ResourceNotFound
from ._client import Message, message_to_wit, messages_of
from ._schema import NAME, convert, description_of, param_docs, signature_fields
from ._tools import failure

MAX_COMPLETIONS = 100
"""The most values one completion carries (MCP's limit)."""


@dataclasses.dataclass(frozen=True)
class Completion:
    """Suggested values for an argument being typed, best first."""

    values: Sequence[str]
    total: Optional[int] = None
    """How many suggestions there are in all, when known."""
    has_more: bool = False
    """Whether there are more than ``values``."""


@dataclasses.dataclass(frozen=True)
class PromptResult:
    """A rendered prompt with a description of this rendering."""

    messages: Sequence[Union[Message, Block, str]]
    description: Optional[str] = None


Completer = Union[Sequence[str], Callable[..., Any]]


def _completion_of(values: Iterable[str]) -> Completion:
    values = list(values)
    for v in values:
        if not isinstance(v, str):
            raise TypeError(f"a completion is a list of strings, not one holding {type(v).__name__}")
    return Completion(values[:MAX_COMPLETIONS], total=len(values), has_more=len(values) > MAX_COMPLETIONS)


def _run_completer(completer: Completer, value: str, context: dict[str, str]) -> Completion:
    """The suggestions ``completer`` (a list of choices, or a function) makes for ``value``."""
    if not callable(completer):
        prefix = value.casefold()
        return _completion_of(c for c in completer if c.casefold().startswith(prefix))
    takes = len(inspect.signature(completer).parameters)
    result = completer(value, context) if takes >= 2 else completer(value)
    if isinstance(result, Completion):
        return Completion(list(result.values)[:MAX_COMPLETIONS], result.total, result.has_more or len(result.values) > MAX_COMPLETIONS)
    return _completion_of(result)


def _check_completers(complete: Optional[Mapping[str, Completer]], known: Sequence[str], where: str) -> dict[str, Completer]:
    out: dict[str, Completer] = {}
    for arg, completer in (complete or {}).items():
        if arg not in known:
            raise TypeError(f"{where}: complete names {arg!r}, which is not one of its arguments ({', '.join(known) or 'none'})")
        if isinstance(completer, str) or not (callable(completer) or isinstance(completer, (list, tuple))):
            raise TypeError(f"{where}: complete[{arg!r}] must be a list of choices or a function(value, context)")
        out[arg] = completer
    return out


def _choices(hint: Any) -> Optional[list[str]]:
    """The values of a ``Literal`` or string enum hint (inside ``Optional``/``Annotated``), else ``None``."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return _choices(args[0])
    if origin is typing.Union:
        options = [a for a in args if a is not type(None)]
        return _choices(options[0]) if len(options) == 1 else None
    if origin is typing.Literal:
        return [a for a in args if isinstance(a, str)]
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return [m.value for m in hint if isinstance(m.value, str)]
    return None


def _is_string_hint(hint: Any) -> bool:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return _is_string_hint(args[0])
    if hint is str:
        return True
    if origin is typing.Union:
        options = [a for a in args if a is not type(None)]
        return len(options) == 1 and _is_string_hint(options[0])
    choices = _choices(hint)
    return choices is not None and len(choices) == len(typing.get_args(hint) or list(hint))


def _string_fields(f: Callable[..., Any], where: str) -> list[tuple[str, Any, bool, Any]]:
    fields = signature_fields(f, where)
    for name, hint, _required, _default in fields:
        if not _is_string_hint(hint):
            raise TypeError(f"{where}: argument {name} must be a string (str, Optional[str], a Literal of strings or a string enum): MCP passes text")
    return fields


def _annotated_description(hint: Any) -> Optional[str]:
    if typing.get_origin(hint) is typing.Annotated:
        for extra in typing.get_args(hint)[1:]:
            if isinstance(extra, str):
                return extra
    return None


def _call_with_strings(func: Callable[..., Any], fields: list[tuple[str, Any, bool, Any]], values: Mapping[str, str]) -> Any:
    """Calls ``func`` with ``values`` converted to its hints; unknown or missing ones are invalid arguments."""
    unknown = sorted(set(values) - {n for n, *_ in fields})
    if unknown:
        raise InvalidArguments(f"unknown argument `{unknown[0]}` (allowed: {', '.join(n for n, *_ in fields) or 'none'})")
    kwargs = {}
    for name, hint, required, _default in fields:
        if name in values:
            kwargs[name] = convert(values[name], hint, name)
        elif required:
            raise InvalidArguments(f"missing required argument `{name}`")
    return func(**kwargs)


# --- prompts ------------------------------------------------------------------------


@dataclasses.dataclass
class _Prompt:
    func: Callable[..., Any]
    fields: list[tuple[str, Any, bool, Any]]
    completers: dict[str, Completer]
    spec: Any


_PROMPTS: dict[str, _Prompt] = {}


def _need_server_exports(what: str) -> None:
    if wit.prompts is None or wit.resources is None:
        raise TypeError(
            f"{what}: this component does not export toolhost:plugin/prompts and resources, "
            "since no module of the plugin imports prompt, resource or resource_template from toolhost_plugin"
        )


def prompt(
    func: Optional[Callable[..., Any]] = None,
    *,
    name: Optional[str] = None,
    title: Optional[str] = None,
    description: Optional[str] = None,
    complete: Optional[Mapping[str, Completer]] = None,
) -> Any:
    """Registers a function as a prompt (``@prompt`` or ``@prompt(title=..., complete=...)``).

    Its parameters are the prompt's arguments: strings (``str``,
    ``Optional[str]``, a ``Literal`` of strings, a string enum), required
    unless they have a default, described by the docstring's ``Args:`` (or
    ``Annotated[str, "..."]``). It returns the messages: a string (the
    user's), a content block, a :class:`Message`, a list of those, or a
    :class:`PromptResult`. ``complete`` maps an argument to its choices (a
    list, matched by prefix) or to a function ``(value, context) -> list``
    (or :class:`Completion`); ``Literal`` and enum arguments complete from
    their values unless given one. Raises ``TypeError`` (failing the
    build) for a bad name, a duplicate, or a non-string argument.
    """

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        prompt_name = name or f.__name__
        where = f"prompt {prompt_name}"
        _need_server_exports(where)
        if not NAME.match(prompt_name):
            raise TypeError(f"{where}: a prompt name is 1 to 64 characters from A-Z a-z 0-9 _ -")
        if prompt_name in _PROMPTS:
            raise TypeError(f"{where}: a prompt of this name is already registered")
        doc = f.__doc__ or ""
        desc = description if description is not None else (description_of(doc) or None)
        fields = _string_fields(f, where)
        docs = param_docs(doc)
        completers = _check_completers(complete, [n for n, *_ in fields], where)
        for arg, hint, *_ in fields:
            choices = _choices(hint)
            if arg not in completers and choices:
                completers[arg] = choices
        p = wit.prompts
        arguments = [
            p.PromptArgument(name=n, title=None, description=_annotated_description(h) or docs.get(n), required=req)
            for n, h, req, _ in fields
        ]
        spec = p.PromptSpec(name=prompt_name, title=title, description=desc, arguments=arguments)
        _PROMPTS[prompt_name] = _Prompt(f, fields, completers, spec)
        return f

    return register(func) if func is not None else register


def _rendered(result: Any, where: str) -> Any:
    p = wit.prompts
    description = None
    if isinstance(result, PromptResult):
        description, result = result.description, result.messages
    if isinstance(result, (str, Message)) or isinstance(result, BLOCKS):
        result = [result]
    messages = [message_to_wit(m, p.PromptMessage, f"{where}, message {i}") for i, m in enumerate(messages_of(list(result)))]
    return p.PromptResult(description=description, messages=messages)


class Prompts:
    """The export of the ``prompts`` interface: lists, renders and completes the ``@prompt`` functions."""

    def list_prompts(self) -> list[Any]:
        return [p.spec for p in _PROMPTS.values()]

    def get_prompt(self, name: str, arguments: list[tuple[str, str]]) -> Any:
        entry = _PROMPTS.get(name)
        if entry is None:
            raise Err(wit.types.ToolError_InvalidArguments(f"this plugin has no prompt named {name!r}"))
        try:
            result = _call_with_strings(entry.func, entry.fields, dict(arguments))
            return _rendered(result, f"prompt {name}")
        except Exception as e:  # the prompt's answer, never a trap
            raise failure(e) from None

    def complete(self, name: str, argument: str, value: str, context: list[tuple[str, str]]) -> Any:
        entry = _PROMPTS.get(name)
        if entry is None:
            raise Err(wit.types.ToolError_InvalidArguments(f"this plugin has no prompt named {name!r}"))
        return _complete(entry.completers, argument, value, context)


def _complete(completers: dict[str, Completer], argument: str, value: str, context: list[tuple[str, str]]) -> Any:
    completer = completers.get(argument)
    if completer is None:
        return wit.types.Completion(values=[], total=None, has_more=False)
    try:
        c = _run_completer(completer, value, dict(context))
    except Exception as e:
        raise failure(e) from None
    return wit.types.Completion(values=list(c.values), total=c.total, has_more=c.has_more)


# --- resources --------------------------------------------------------------------------

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
MAX_URI_BYTES = 2048


def check_uri(uri: Any, where: str) -> None:
    """The host's rule for a resource URI or template: a scheme, at most 2048 bytes, no whitespace or control characters."""
    if not isinstance(uri, str) or not uri:
        raise TypeError(f"{where}: a URI is a non-empty string")
    if len(uri.encode()) > MAX_URI_BYTES:
        raise TypeError(f"{where}: the URI is longer than {MAX_URI_BYTES} bytes")
    if any(c.isspace() or unicodedata.category(c) == "Cc" for c in uri):
        raise TypeError(f"{where}: {uri!r} contains whitespace or control characters")
    if not _SCHEME.match(uri):
        raise TypeError(f"{where}: {uri!r} has no scheme (`scheme:...`)")


@dataclasses.dataclass
class UriTemplate:
    """A URI template as the host matches it: ``{name}`` (one or more characters
    other than ``/ ? #``) and ``{+name}`` (one or more of any) variables."""

    template: str
    names: list[str]
    pattern: re.Pattern

    @staticmethod
    def parse(template: str, where: str) -> "UriTemplate":
        check_uri(template, where)
        names: list[str] = []
        pattern, rest, after_var = "^", template, False
        while "{" in rest:
            open_ = rest.index("{")
            literal = rest[:open_]
            if "}" in literal:
                raise TypeError(f"{where}: URI template {template!r}: a `}}` is not opened")
            if not literal and after_var:
                raise TypeError(f"{where}: URI template {template!r}: two variables in a row cannot be told apart")
            pattern += re.escape(literal)
            close = rest.find("}", open_)
            if close < 0:
                raise TypeError(f"{where}: URI template {template!r}: a `{{` is not closed")
            inner = rest[open_ + 1 : close]
            reserved = inner.startswith("+")
            var = inner[1:] if reserved else inner
            if not var or not all(c.isascii() and (c.isalnum() or c == "_") for c in var):
                raise TypeError(f"{where}: URI template {template!r}: `{{{inner}}}` is not a variable the host matches (`{{name}}` or `{{+name}}`)")
            if var in names:
                raise TypeError(f"{where}: URI template {template!r}: variable `{var}` appears twice")
            pattern += "(.+?)" if reserved else "([^/?#]+?)"
            names.append(var)
            rest, after_var = rest[close + 1 :], True
        if "}" in rest:
            raise TypeError(f"{where}: URI template {template!r}: a `}}` is not opened")
        return UriTemplate(template, names, re.compile(pattern + re.escape(rest) + "$", re.DOTALL))

    def match(self, uri: str) -> Optional[dict[str, str]]:
        m = self.pattern.match(uri)
        return None if m is None else dict(zip(self.names, m.groups()))


@dataclasses.dataclass
class _Resource:
    func: Callable[..., Any]
    spec: Any
    mime_type: Optional[str]


@dataclasses.dataclass
class _Template:
    func: Callable[..., Any]
    template: UriTemplate
    fields: list[tuple[str, Any, bool, Any]]
    completers: dict[str, Completer]
    spec: Any
    mime_type: Optional[str]


_RESOURCES: dict[str, _Resource] = {}
_TEMPLATES: dict[str, _Template] = {}


def _check_annotations(annotations: Any, where: str) -> None:
    if annotations is not None and not isinstance(annotations, Annotations):
        raise TypeError(f"{where}: annotations must be an Annotations")


def resource(
    uri: str,
    *,
    name: Optional[str] = None,
    title: Optional[str] = None,
    description: Optional[str] = None,
    mime_type: Optional[str] = None,
    size: Optional[int] = None,
    annotations: Optional[Annotations] = None,
) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
    """Registers a function without parameters as the resource at ``uri`` (``@resource("notes://index")``).

    ``name`` defaults to the function's name, ``description`` to its
    docstring. Reading the resource calls the function: a string is its text,
    ``bytes`` its blob (with ``mime_type``), or it returns
    :class:`TextResource`/:class:`BlobResource` contents, or a list of them.
    Raising :class:`ResourceNotFound` answers ``not-found``; any other
    exception ``failed``. Raises ``TypeError`` (failing the build) for a
    URI the host would refuse or a duplicate.
    """

    def register(f: Callable[[], Any]) -> Callable[[], Any]:
        where = f"resource {uri}"
        _need_server_exports(where)
        check_uri(uri, where)
        if uri in _RESOURCES:
            raise TypeError(f"{where}: a resource with this URI is already registered")
        if inspect.signature(f).parameters:
            raise TypeError(f"{where}: a resource's function takes no parameters (a family of resources is a @resource_template)")
        _check_annotations(annotations, where)
        desc = description if description is not None else (description_of(f.__doc__ or "") or None)
        spec = wit.resources.ResourceSpec(
            uri=uri, name=name or f.__name__, title=title, description=desc,
            mime_type=mime_type, size=size, annotations=annotations_to_wit(annotations),
        )
        _RESOURCES[uri] = _Resource(f, spec, mime_type)
        return f

    return register


def resource_template(
    uri_template: str,
    *,
    name: Optional[str] = None,
    title: Optional[str] = None,
    description: Optional[str] = None,
    mime_type: Optional[str] = None,
    annotations: Optional[Annotations] = None,
    complete: Optional[Mapping[str, Completer]] = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Registers a function as a family of resources (``@resource_template("notes://{id}")``).

    The template's variables (``{name}``: no ``/ ? #``; ``{+name}``:
    anything) are the function's parameters, all strings (``str``, a
    ``Literal`` of strings, a string enum); a read of a URI the template
    matches calls it with the variables' text, and it answers as a
    :func:`resource`'s function does. ``complete`` as for :func:`prompt`.
    """

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        where = f"resource template {uri_template}"
        _need_server_exports(where)
        template = UriTemplate.parse(uri_template, where)
        if uri_template in _TEMPLATES:
            raise TypeError(f"{where}: a template of this text is already registered")
        fields = _string_fields(f, where)
        params = [n for n, *_ in fields]
        if sorted(params) != sorted(template.names):
            raise TypeError(f"{where}: the function's parameters ({', '.join(params) or 'none'}) must be the template's variables ({', '.join(template.names)})")
        _check_annotations(annotations, where)
        completers = _check_completers(complete, template.names, where)
        for arg, hint, *_ in fields:
            choices = _choices(hint)
            if arg not in completers and choices:
                completers[arg] = choices
        desc = description if description is not None else (description_of(f.__doc__ or "") or None)
        spec = wit.resources.ResourceTemplate(
            uri_template=uri_template, name=name or f.__name__, title=title, description=desc,
            mime_type=mime_type, annotations=annotations_to_wit(annotations),
        )
        _TEMPLATES[uri_template] = _Template(f, template, fields, completers, spec, mime_type)
        return f

    return register


def _contents(result: Any, uri: str, mime_type: Optional[str]) -> list[Any]:
    if isinstance(result, str):
        result = TextResource(uri, result, mime_type)
    elif isinstance(result, (bytes, bytearray, memoryview)):
        result = BlobResource(uri, bytes(result), mime_type)
    items = result if isinstance(result, (list, tuple)) else [result]
    out = []
    for item in items:
        if not isinstance(item, (TextResource, BlobResource)):
            raise TypeError(f"reading {uri} returned {type(item).__name__}: return a string, bytes, TextResource or BlobResource")
        if item.annotations is not None:
            raise TypeError(f"reading {uri}: a resource's contents carry no annotations (state them in @resource(annotations=...))")
        out.append(resource_contents_to_wit(item))
    return out


def _read_failure(e: Exception) -> Err:
    r = wit.resources
    if isinstance(e, ResourceNotFound):
        return Err(r.ReadError_NotFound(str(e)))
    traceback.print_exception(e, file=sys.stderr)
    return Err(r.ReadError_Failed(f"{type(e).__name__}: {e}" if str(e) else type(e).__name__))


class Resources:
    """The export of the ``resources`` interface: lists and reads the ``@resource`` and
    ``@resource_template`` functions, and completes template variables."""

    def list_resources(self) -> list[Any]:
        return [r.spec for r in _RESOURCES.values()]

    def list_templates(self) -> list[Any]:
        return [t.spec for t in _TEMPLATES.values()]

    def read_resource(self, uri: str) -> list[Any]:
        try:
            entry = _RESOURCES.get(uri)
            if entry is not None:
                return _contents(entry.func(), uri, entry.mime_type)
            for t in _TEMPLATES.values():
                variables = t.template.match(uri)
                if variables is None:
                    continue
                try:
                    kwargs = {n: convert(variables[n], hint, n) for n, hint, *_ in t.fields}
                except InvalidArguments as e:  # a variable outside its choices: no such resource
                    raise ResourceNotFound(f"{uri}: {e}") from None
                return _contents(t.func(**kwargs), uri, t.mime_type)
        except Exception as e:  # the read's answer, never a trap
            raise _read_failure(e) from None
        raise Err(wit.resources.ReadError_NotFound(f"this plugin has no resource {uri}"))

    def complete(self, template: str, argument: str, value: str, context: list[tuple[str, str]]) -> Any:
        entry = _TEMPLATES.get(template)
        if entry is None:
            raise Err(wit.types.ToolError_InvalidArguments(f"this plugin has no resource template {template!r}"))
        return _complete(entry.completers, argument, value, context)
