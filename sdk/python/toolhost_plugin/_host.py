"""What a plugin asks of the host while it runs: logs, progress, nested tool
calls, and questions to the client (elicitation, sampling)."""

from __future__ import annotations

import dataclasses
import json
import typing
from typing import Any, Optional, Sequence, Union

from componentize_py_types import Err, Ok

from . import _bindings as wit
from ._content import BLOCKS, ROLES, Audio, Block, Image, Text, block_from_wit, block_to_wit
from ._errors import CallError, ClientError, InvalidArguments
from ._schema import convert, dumps, is_typeddict, schema_of, to_json

# --- logs and progress ------------------------------------------------------------

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
# toolhost:plugin@0.2.0's names, still taken.
_ALIASES = {"trace": "debug", "warn": "warning"}


def log(level: str, message: str, **fields: Any) -> None:
    """Writes a record into the host's log, and to an MCP client that asked for the call's log.

    ``level`` is one of MCP's eight: debug, info, notice, warning, error,
    critical, alert, emergency (``trace`` and ``warn`` are taken for debug
    and warning). ``fields`` are attached to the record (non-strings as
    JSON). Never fails: the host drops records past its caps.
    """
    name = _ALIASES.get(level, level)
    if name not in LEVELS:
        raise ValueError(f"log level {level!r} is not one of {', '.join(LEVELS)}")
    if wit.host is None:
        raise wit.missing("host", "log")
    pairs = [(k, v if isinstance(v, str) else dumps(to_json(v))) for k, v in fields.items()]
    wit.host.log(wit.host.Level[name.upper()], message, pairs)


def progress(done: float, total: Optional[float] = None, message: Optional[str] = None) -> None:
    """Reports that ``done`` units of ``total`` are finished (MCP progress); never fails."""
    if wit.progress is None:
        raise wit.missing("progress", "progress")
    wit.progress.report(float(done), None if total is None else float(total), message)


# --- nested calls ---------------------------------------------------------------------


def result_value(tool_name: str, output: Any) -> Any:
    """A nested call's value: its structured JSON, decoded; else its text
    when every block is text; else its blocks."""
    if output.structured is not None:
        try:
            return json.loads(output.structured)
        except json.JSONDecodeError as e:
            raise CallError(tool_name, "invalid_result", f"the structured result is not JSON: {e}") from None
    blocks = [block_from_wit(b) for b in output.content]
    if all(isinstance(b, Text) for b in blocks):
        return "\n".join(b.text for b in blocks)
    return blocks


def call(name: str, arguments: Optional[dict] = None, /, **kwargs: Any) -> Any:
    """Calls tool ``name`` through the host and returns its result.

    The result is the tool's structured JSON (decoded) when it gives one;
    else its text, when it answered only text; else its content blocks
    (:class:`Image`, ...). Arguments come as a dict or as keywords. Raises
    :class:`CallError` (with the host's ``code``) when the call fails: not
    declared, not granted, invalid arguments, the tool's own failure...
    Uncaught, it fails the calling tool with that message.
    """
    if wit.tools is None:
        raise wit.missing("tools", "call")
    payload = dict(arguments or {}, **kwargs)
    try:
        return result_value(name, wit.tools.call(name, dumps(to_json(payload))))
    except Err as e:
        raise CallError(name, e.value.code, e.value.message) from None


def call_many(calls: typing.Iterable[tuple[str, dict]]) -> list[Any]:
    """Runs several ``(name, arguments)`` calls at once; returns each result in order.

    A call that failed is a :class:`CallError` in its place (not raised), so the
    others' results are kept.
    """
    if wit.tools is None:
        raise wit.missing("tools", "call_many")
    calls = list(calls)
    batch = [wit.tools.ToolCall(name=n, arguments=dumps(to_json(a or {}))) for n, a in calls]
    results: list[Any] = []
    for (name, _), result in zip(calls, wit.tools.call_many(batch)):
        if isinstance(result, Ok):
            try:
                results.append(result_value(name, result.value))
            except CallError as e:
                results.append(e)
        else:
            results.append(CallError(name, result.value.code, result.value.message))
    return results


# --- the client: elicitation ------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Elicitation:
    """The user's answer to :func:`elicit`."""

    action: str
    """``"accept"`` (answered), ``"decline"`` (said no) or ``"cancel"`` (dismissed)."""
    content: Any = None
    """The form's values when they accepted: a dict, or an instance of the class the form was described by."""

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


def elicit(message: str, schema: Union[dict, type]) -> Elicitation:
    """Asks the user ``message`` with a form and waits for the answer (MCP elicitation).

    ``schema`` describes the form: a JSON Schema dict (an object of
    primitive properties, as MCP restricts it), or a dataclass or
    ``TypedDict`` whose fields are ``str``, ``int``, ``float``, ``bool``,
    ``Literal``/enum (its JSON Schema is derived as for tool parameters; an
    accepted answer then arrives as an instance). Needs
    ``declare(elicitation=True)`` and the operator's grant. Raises
    :class:`ClientError` when nobody could be asked: ``code`` is
    ``capability_not_granted``, ``unavailable`` (no client that can answer),
    ``timeout``, ...
    """
    if wit.client is None:
        raise wit.missing("client", "elicit")
    if not isinstance(message, str):
        raise TypeError(f"elicit(message, ...): message must be a string, not {type(message).__name__}")
    typed = isinstance(schema, type)
    if typed:
        if not ((dataclasses.is_dataclass(schema)) or is_typeddict(schema)):
            raise TypeError(f"elicit(..., schema): a class must be a dataclass or a TypedDict, not {schema.__name__}")
        json_schema = schema_of(schema, f"elicit form {schema.__name__}")
    elif isinstance(schema, dict):
        json_schema = schema
    else:
        raise TypeError(f"elicit(..., schema): give a JSON Schema dict or a dataclass, not {type(schema).__name__}")
    if json_schema.get("type") != "object":
        raise TypeError('elicit(..., schema): the form\'s schema must describe an object ("type": "object")')
    try:
        response = wit.client.elicit(message, dumps(json_schema))
    except Err as e:
        raise ClientError("elicit", e.value.code, e.value.message) from None
    action = response.action.name.lower()
    if response.content is None:
        return Elicitation(action)
    try:
        content = json.loads(response.content)
    except json.JSONDecodeError as e:
        raise ClientError("elicit", "invalid_response", f"the answer is not JSON: {e}") from None
    if typed:
        try:
            content = convert(content, schema, "")
        except InvalidArguments as e:
            raise ClientError("elicit", "invalid_response", f"the answer does not fit the form: {e}") from None
    return Elicitation(action, content)


# --- the client: sampling ----------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Message:
    """One message of a conversation: who says it, and what (a string is :class:`Text`)."""

    role: str
    """``"user"`` or ``"assistant"``."""
    content: Union[Block, str]

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"Message.role must be user or assistant, not {self.role!r}")
        if not isinstance(self.content, (str,) + BLOCKS):
            raise TypeError(f"Message.content must be a string or a content block, not {type(self.content).__name__}")


def message_to_wit(message: Message, make: Any, where: str) -> Any:
    return make(wit.types.Role[message.role.upper()], block_to_wit(message.content, where))


def messages_of(messages: Union[str, Block, Message, Sequence[Union[str, Block, Message]]]) -> list[Message]:
    """A string, a block, a message or a list of them as messages (a bare string or block is the user's)."""
    if isinstance(messages, (str, Message)) or isinstance(messages, BLOCKS):
        messages = [messages]
    out = []
    for m in messages:
        out.append(m if isinstance(m, Message) else Message("user", m))
    return out


@dataclasses.dataclass(frozen=True)
class Sampled:
    """The client's model's answer to :func:`sample`."""

    content: Block
    """The answer: text, an image or audio."""
    model: str
    """The model that answered, as the client names it."""
    role: str = "assistant"
    stop_reason: Optional[str] = None
    """Why it ended: ``endTurn``, ``maxTokens``, ``stopSequence``, ..."""

    @property
    def text(self) -> Optional[str]:
        """The answer's text, or ``None`` when it is not text."""
        return self.content.text if isinstance(self.content, Text) else None


def sample(
    messages: Union[str, Message, Sequence[Union[str, Message]]],
    *,
    max_tokens: int,
    system_prompt: Optional[str] = None,
    temperature: Optional[float] = None,
    stop_sequences: Sequence[str] = (),
    model_preferences: Optional[dict] = None,
) -> Sampled:
    """Asks the client's model for a completion and waits for it (MCP sampling).

    ``messages``: the conversation so far, a string (the user's) or a list
    of :class:`Message` (text, images or audio); ``max_tokens``: the most
    the answer may take (within the operator's budget);
    ``model_preferences``: MCP's ``modelPreferences`` (``hints``,
    ``costPriority``, ...). Needs ``declare(sampling=True)`` and the
    operator's grant. Raises :class:`ClientError` when no answer came:
    ``capability_not_granted``, ``unavailable``, ``blocked`` (past the
    budget), ...
    """
    if wit.client is None:
        raise wit.missing("client", "sample")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not 0 < max_tokens < 2**32:
        raise ValueError(f"sample(max_tokens=...) must be a positive integer, not {max_tokens!r}")
    if isinstance(stop_sequences, str):
        raise TypeError("sample(stop_sequences=...) takes a list of strings, not a string")
    converted = []
    for i, m in enumerate(messages_of(messages)):
        if not isinstance(m.content, (str, Text, Image, Audio)):
            raise TypeError(f"sample: message {i} is {type(m.content).__name__}; sampling takes text, images and audio")
        converted.append(message_to_wit(m, wit.client.SamplingMessage, f"sample: message {i}"))
    request = wit.client.SamplingRequest(
        messages=converted,
        system_prompt=system_prompt,
        max_tokens=max_tokens,
        temperature=None if temperature is None else float(temperature),
        stop_sequences=list(stop_sequences),
        model_preferences=None if model_preferences is None else dumps(to_json(model_preferences)),
    )
    try:
        response = wit.client.sample(request)
    except Err as e:
        raise ClientError("sample", e.value.code, e.value.message) from None
    return Sampled(
        content=block_from_wit(response.content),
        model=response.model,
        role=response.role.name.lower(),
        stop_reason=response.stop_reason,
    )
