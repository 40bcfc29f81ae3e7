"""Content: what a tool returns, a prompt says, a resource holds (MCP content
blocks), and how each becomes its WIT value and back."""

from __future__ import annotations

import dataclasses
import math
import typing
from typing import Any, Optional, Sequence, Union

from . import _bindings as wit
from ._schema import dumps, to_json

ROLES = ("user", "assistant")


@dataclasses.dataclass(frozen=True)
class Annotations:
    """Who a piece of content is for, how important it is, when it changed (all advisory)."""

    audience: Sequence[str] = ()
    """``"user"`` and/or ``"assistant"``; empty when not stated."""
    priority: Optional[float] = None
    """From 0 (least important) to 1 (most)."""
    last_modified: Optional[str] = None
    """An ISO 8601 timestamp."""

    def __post_init__(self) -> None:
        if isinstance(self.audience, str):
            raise TypeError(f"Annotations.audience is a list of roles, not the string {self.audience!r}")
        for role in self.audience:
            if role not in ROLES:
                raise ValueError(f"Annotations.audience: {role!r} is not a role (user, assistant)")
        if self.priority is not None and not (isinstance(self.priority, (int, float)) and 0 <= self.priority <= 1):
            raise ValueError(f"Annotations.priority must be a number from 0 to 1, not {self.priority!r}")


def _check_bytes(kind: str, field: str, value: Any) -> None:
    if isinstance(value, str):
        raise TypeError(f"{kind}.{field} takes bytes, not a string (decode base64 text with base64.b64decode first)")
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(f"{kind}.{field} takes bytes, not {type(value).__name__}")


def _check_str(kind: str, field: str, value: Any, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise TypeError(f"{kind}.{field} must be a string, not {type(value).__name__}")


@dataclasses.dataclass(frozen=True)
class Text:
    """Text for the model."""

    text: str
    annotations: Optional[Annotations] = None

    def __post_init__(self) -> None:
        _check_str("Text", "text", self.text)


@dataclasses.dataclass(frozen=True)
class Image:
    """An image: its bytes and MIME type (``image/png``...); the host base64-encodes them for MCP."""

    data: bytes
    mime_type: str
    annotations: Optional[Annotations] = None

    def __post_init__(self) -> None:
        _check_bytes("Image", "data", self.data)
        _check_str("Image", "mime_type", self.mime_type)


@dataclasses.dataclass(frozen=True)
class Audio:
    """A sound: its bytes and MIME type (``audio/wav``...)."""

    data: bytes
    mime_type: str
    annotations: Optional[Annotations] = None

    def __post_init__(self) -> None:
        _check_bytes("Audio", "data", self.data)
        _check_str("Audio", "mime_type", self.mime_type)


@dataclasses.dataclass(frozen=True)
class ResourceLink:
    """A link to a resource the client may read."""

    uri: str
    name: str
    title: Optional[str] = None
    description: Optional[str] = None
    mime_type: Optional[str] = None
    size: Optional[int] = None
    annotations: Optional[Annotations] = None

    def __post_init__(self) -> None:
        _check_str("ResourceLink", "uri", self.uri)
        _check_str("ResourceLink", "name", self.name)
        if self.size is not None and (not isinstance(self.size, int) or isinstance(self.size, bool) or self.size < 0):
            raise TypeError(f"ResourceLink.size must be a number of bytes, not {self.size!r}")


@dataclasses.dataclass(frozen=True)
class TextResource:
    """A resource's contents as text: what a resource read returns, and, in a
    tool's result, a resource embedded whole."""

    uri: str
    text: str
    mime_type: Optional[str] = None
    annotations: Optional[Annotations] = None

    def __post_init__(self) -> None:
        _check_str("TextResource", "uri", self.uri)
        _check_str("TextResource", "text", self.text)
        _check_str("TextResource", "mime_type", self.mime_type, optional=True)


@dataclasses.dataclass(frozen=True)
class BlobResource:
    """A resource's contents as bytes (see :class:`TextResource`)."""

    uri: str
    blob: bytes
    mime_type: Optional[str] = None
    annotations: Optional[Annotations] = None

    def __post_init__(self) -> None:
        _check_str("BlobResource", "uri", self.uri)
        _check_bytes("BlobResource", "blob", self.blob)
        _check_str("BlobResource", "mime_type", self.mime_type, optional=True)


Block = Union[Text, Image, Audio, ResourceLink, TextResource, BlobResource]
BLOCKS = (Text, Image, Audio, ResourceLink, TextResource, BlobResource)

_T = typing.TypeVar("_T")


@dataclasses.dataclass
class Output(typing.Generic[_T]):
    """A tool's result: structured JSON, the text the model reads, other content.

    Annotate a tool ``-> Output[Stats]`` to give it ``Stats``'s output schema.
    """

    value: Optional[_T] = None
    """The structured result (MCP ``structuredContent``): a JSON object (a dict,
    a dataclass, a ``TypedDict``), or ``None``."""
    text: Optional[str] = None
    """Text for the model, shown first; with neither text nor content the host shows the JSON."""
    content: Sequence[Union[Block, str]] = ()
    """More content blocks, in order (a string is a :class:`Text`)."""


# --- into WIT -------------------------------------------------------------------


def annotations_to_wit(annotations: Optional[Annotations]) -> Any:
    if annotations is None:
        return None
    if not isinstance(annotations, Annotations):
        raise TypeError(f"annotations must be an Annotations, not {type(annotations).__name__}")
    return wit.types.Annotations(
        audience=[wit.types.Role[r.upper()] for r in annotations.audience],
        priority=None if annotations.priority is None else float(annotations.priority),
        last_modified=annotations.last_modified,
    )


def resource_contents_to_wit(contents: Union[TextResource, BlobResource]) -> Any:
    if isinstance(contents, TextResource):
        return wit.types.ResourceContents_Text(wit.types.TextContents(contents.uri, contents.mime_type, contents.text))
    return wit.types.ResourceContents_Blob(wit.types.BlobContents(contents.uri, contents.mime_type, bytes(contents.blob)))


def block_to_wit(block: Union[Block, str], where: str) -> Any:
    """A content block as WIT ``content-block``; ``where`` names it in errors."""
    if isinstance(block, str):
        block = Text(block)
    t = wit.types
    if isinstance(block, Text):
        content: Any = t.Content_Text(block.text)
    elif isinstance(block, Image):
        content = t.Content_Image(t.Media(bytes(block.data), block.mime_type))
    elif isinstance(block, Audio):
        content = t.Content_Audio(t.Media(bytes(block.data), block.mime_type))
    elif isinstance(block, ResourceLink):
        link = t.ResourceLink(block.uri, block.name, block.title, block.description, block.mime_type, block.size)
        content = t.Content_ResourceLink(link)
    elif isinstance(block, (TextResource, BlobResource)):
        content = t.Content_EmbeddedResource(resource_contents_to_wit(block))
    else:
        raise TypeError(
            f"{where}: {type(block).__name__} is not content "
            "(Text, Image, Audio, ResourceLink, TextResource, BlobResource, or a string)"
        )
    return t.ContentBlock(content, annotations_to_wit(block.annotations))


def _structured(value: Any, where: str) -> Optional[str]:
    if value is None:
        return None
    data = to_json(value)
    if not isinstance(data, dict):
        raise TypeError(
            f"{where}: the structured result (MCP structuredContent) must be a JSON object, "
            f"not {type(value).__name__}; return it as text instead"
        )
    return dumps(data)


def _is_blocks(value: Any) -> bool:
    if not isinstance(value, (list, tuple)) or not value:
        return False
    kinds = [isinstance(v, BLOCKS) for v in value]
    if any(kinds) and not all(kinds):
        raise TypeError("a result list mixes content blocks and plain values: wrap strings in Text(...)")
    return all(kinds)


def output_to_wit(result: Any, where: str) -> Any:
    """What a tool returned as WIT ``tool-output``.

    A JSON object (dict, dataclass, ``TypedDict``) is the structured result;
    a string is its text; a content block, or a list of them, is the content;
    :class:`Output` gives both; ``None`` gives nothing; any other JSON value
    (a number, a list) is the structured result ``{"result": value}`` with
    its JSON as text.
    """
    if isinstance(result, Output):
        if isinstance(result.content, str):
            raise TypeError(f"{where}: Output.content is a list of blocks; put a lone string in Output.text")
        blocks = [block_to_wit(b, where) for b in result.content]
        if result.text is not None:
            if not isinstance(result.text, str):
                raise TypeError(f"{where}: Output.text must be a string or None, not {type(result.text).__name__}")
            blocks.insert(0, block_to_wit(Text(result.text), where))
        return wit.types.ToolOutput(_structured(result.value, where), blocks)
    if isinstance(result, BLOCKS):
        return wit.types.ToolOutput(None, [block_to_wit(result, where)])
    if _is_blocks(result):
        return wit.types.ToolOutput(None, [block_to_wit(b, where) for b in result])
    if isinstance(result, str):
        return wit.types.ToolOutput(None, [block_to_wit(Text(result), where)])
    if result is None:
        return wit.types.ToolOutput(None, [])
    data = to_json(result)
    if isinstance(data, dict):
        return wit.types.ToolOutput(dumps(data), [])
    if isinstance(data, float) and not math.isfinite(data):
        raise ValueError(f"{data} is not JSON")
    # MCP wants an object as structured content: the value goes as
    # {"result": value}, with its JSON as the text for the model (as MCP
    # servers commonly give such values, and toolhost's Rust SDK does).
    return wit.types.ToolOutput(dumps({"result": data}), [block_to_wit(Text(dumps(data)), where)])


# --- out of WIT -----------------------------------------------------------------


def annotations_from_wit(a: Any) -> Optional[Annotations]:
    if a is None:
        return None
    return Annotations(audience=tuple(r.name.lower() for r in a.audience), priority=a.priority, last_modified=a.last_modified)


def resource_contents_from_wit(c: Any, annotations: Optional[Annotations] = None) -> Union[TextResource, BlobResource]:
    if isinstance(c, wit.types.ResourceContents_Text):
        return TextResource(c.value.uri, c.value.text, c.value.mime_type, annotations)
    return BlobResource(c.value.uri, bytes(c.value.blob), c.value.mime_type, annotations)


def block_from_wit(block: Any) -> Block:
    """A WIT ``content-block`` as the SDK's block."""
    t, c = wit.types, block.content
    annotations = annotations_from_wit(block.annotations)
    if isinstance(c, t.Content_Text):
        return Text(c.value, annotations)
    if isinstance(c, t.Content_Image):
        return Image(bytes(c.value.data), c.value.mime_type, annotations)
    if isinstance(c, t.Content_Audio):
        return Audio(bytes(c.value.data), c.value.mime_type, annotations)
    if isinstance(c, t.Content_ResourceLink):
        v = c.value
        return ResourceLink(v.uri, v.name, v.title, v.description, v.mime_type, v.size, annotations)
    return resource_contents_from_wit(c.value, annotations)
