"""Asking the client of the call: its user (elicitation), its model
(sampling), its roots; one question at a time or several in one round; what
it can be asked; and letting the caller go with a task."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any, Optional, Sequence, Union

from componentize_py_types import Err, Ok

from . import _bindings as wit
from ._content import BLOCKS, ROLES, Audio, Block, Image, Text, block_from_wit, block_to_wit
from ._errors import ClientError, InvalidArguments
from ._schema import convert, dumps, is_typeddict, schema_of, to_json

# --- elicitation ------------------------------------------------------------------


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


@dataclasses.dataclass(frozen=True)
class _Form:
    """A question for the user as the host takes it, and how to read the answer."""

    message: str
    schema: str
    typed: Optional[type]

    @staticmethod
    def of(message: Any, schema: Union[dict, type], where: str) -> _Form:
        if not isinstance(message, str):
            raise TypeError(f"{where}: the message must be a string, not {type(message).__name__}")
        typed = schema if isinstance(schema, type) else None
        if typed is not None:
            if not (dataclasses.is_dataclass(typed) or is_typeddict(typed)):
                raise TypeError(f"{where}: a form class must be a dataclass or a TypedDict, not {typed.__name__}")
            json_schema = schema_of(typed, f"elicit form {typed.__name__}")
        elif isinstance(schema, dict):
            json_schema = schema
        else:
            raise TypeError(f"{where}: give the form as a JSON Schema dict or a dataclass, not {type(schema).__name__}")
        if json_schema.get("type") != "object":
            raise TypeError(f'{where}: the form\'s schema must describe an object ("type": "object")')
        return _Form(message, dumps(json_schema), typed)

    def answer(self, response: Any, request: str) -> Elicitation:
        """The host's ``elicit-response`` as an :class:`Elicitation`, its content read."""
        action = response.action.name.lower()
        if response.content is None:
            return Elicitation(action)
        try:
            content = json.loads(response.content)
        except json.JSONDecodeError as e:
            raise ClientError(request, "invalid_response", f"the answer is not JSON: {e}") from None
        if self.typed is not None:
            try:
                content = convert(content, self.typed, "")
            except InvalidArguments as e:
                raise ClientError(request, "invalid_response", f"the answer does not fit the form: {e}") from None
        return Elicitation(action, content)


def _client(uses: str) -> Any:
    if wit.client is None:
        raise wit.missing("client", uses)
    return wit.client


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
    client = _client("elicit")
    form = _Form.of(message, schema, "elicit(message, schema)")
    try:
        response = client.elicit(form.message, form.schema)
    except Err as e:
        raise ClientError("elicit", e.value.code, e.value.message) from None
    return form.answer(response, "elicit")


# --- sampling ---------------------------------------------------------------------


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


def _sampling_request(
    client: Any,
    messages: Any,
    where: str,
    *,
    max_tokens: Any,
    system_prompt: Optional[str] = None,
    temperature: Optional[float] = None,
    stop_sequences: Sequence[str] = (),
    model_preferences: Optional[dict] = None,
) -> Any:
    """The WIT ``sampling-request`` of :func:`sample`'s arguments, checked."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not 0 < max_tokens < 2**32:
        raise ValueError(f"{where}: max_tokens must be a positive integer, not {max_tokens!r}")
    if isinstance(stop_sequences, str):
        raise TypeError(f"{where}: stop_sequences takes a list of strings, not a string")
    converted = []
    for i, m in enumerate(messages_of(messages)):
        if not isinstance(m.content, (str, Text, Image, Audio)):
            raise TypeError(f"{where}: message {i} is {type(m.content).__name__}; sampling takes text, images and audio")
        converted.append(message_to_wit(m, client.SamplingMessage, f"{where}: message {i}"))
    return client.SamplingRequest(
        messages=converted,
        system_prompt=system_prompt,
        max_tokens=max_tokens,
        temperature=None if temperature is None else float(temperature),
        stop_sequences=list(stop_sequences),
        model_preferences=None if model_preferences is None else dumps(to_json(model_preferences)),
    )


_SAMPLING_OPTIONS = ("max_tokens", "system_prompt", "temperature", "stop_sequences", "model_preferences")


def _sampled(response: Any) -> Sampled:
    return Sampled(
        content=block_from_wit(response.content),
        model=response.model,
        role=response.role.name.lower(),
        stop_reason=response.stop_reason,
    )


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
    client = _client("sample")
    request = _sampling_request(
        client,
        messages,
        "sample",
        max_tokens=max_tokens,
        system_prompt=system_prompt,
        temperature=temperature,
        stop_sequences=stop_sequences,
        model_preferences=model_preferences,
    )
    try:
        return _sampled(client.sample(request))
    except Err as e:
        raise ClientError("sample", e.value.code, e.value.message) from None


# --- roots ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Root:
    """A directory or file the client exposes (MCP's root)."""

    uri: str
    """Its URI, e.g. ``file:///home/ada/project``."""
    name: Optional[str] = None
    """A name for people."""


def _roots(roots: Sequence[Any]) -> list[Root]:
    return [Root(r.uri, r.name) for r in roots]


def list_roots() -> list[Root]:
    """Lists the client's roots (MCP ``roots/list``) and waits for them.

    Needs ``declare(roots=True)`` and the operator's grant (``roots =
    true``). Raises :class:`ClientError` as :func:`elicit` does.
    """
    client = _client("list_roots")
    try:
        return _roots(client.list_roots())
    except Err as e:
        raise ClientError("list_roots", e.value.code, e.value.message) from None


# --- what may be asked, and tasks -------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Available:
    """What this call may ask its client: each is true when the plugin declared
    and was granted the capability, and the client can answer it."""

    elicitation: bool
    """Questions for the user (:func:`elicit`)."""
    sampling: bool
    """Completions from the model (:func:`sample`)."""
    roots: bool
    """The client's roots (:func:`list_roots`)."""


def available() -> Available:
    """What this call may ask of its client, to ask only that (a client on MCP
    2026-07-28 refuses a request for something it did not declare). Never fails."""
    a = _client("available").available()
    return Available(elicitation=a.elicitation, sampling=a.sampling, roots=a.roots)


def begin_task() -> bool:
    """Lets the caller go while this call carries on, as an MCP task.

    For a tool declared ``@tool(task=..., deferred=True)`` and called by a
    client that supports MCP tasks, the request is answered now with a task
    and the call runs on as that task: gather the inputs first (questions
    asked before are the request's own), then begin the long part. True when
    the call is now a task; false when it is not and will not be (the tool
    is not declared deferred, the client does not support tasks, the call
    is a nested one), and the call goes on as before. Never fails.
    """
    return bool(_client("begin_task").begin_task())


# --- several questions in one round -----------------------------------------------------

MAX_QUESTIONS = 16
"""The most questions one round may hold."""

# A question's key as the host accepts it (the rule in wit/0.3.1/plugin.wit).
KEY = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


@dataclasses.dataclass(frozen=True)
class Question:
    """One question of a round (:func:`ask`), named by its key.

    Make one with :meth:`elicit`, :meth:`sample` or :meth:`list_roots`. The
    key is 1 to 64 characters of ``A-Z a-z 0-9 _ - .``, distinct within the
    round; on MCP 2026-07-28 the client sees it as the key of the question.
    """

    key: str
    kind: str
    """``"elicit"``, ``"sample"`` or ``"list_roots"``."""
    _request: Any = dataclasses.field(repr=False, compare=False)
    _form: Optional[_Form] = dataclasses.field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.key, str) or not KEY.match(self.key):
            raise ValueError(f"question key {self.key!r}: a key is 1 to 64 characters of A-Z a-z 0-9 _ - .")

    @staticmethod
    def elicit(key: str, message: str, schema: Union[dict, type]) -> Question:
        """A question for the user with a form, as :func:`elicit` takes it; answered by an :class:`Elicitation`."""
        client = _client("Question.elicit")
        form = _Form.of(message, schema, f"Question.elicit({key!r}, ...)")
        request = client.Request_Elicit(client.ElicitRequest(form.message, form.schema))
        return Question(key, "elicit", request, form)

    @staticmethod
    def sample(key: str, messages: Union[str, Message, Sequence[Union[str, Message]]], **options: Any) -> Question:
        """A request for a completion from the client's model, answered by :class:`Sampled`.

        ``messages`` and ``options`` are :func:`sample`'s (``max_tokens=...``,
        required, ``system_prompt=...``, ``temperature=...``,
        ``stop_sequences=...``, ``model_preferences=...``).
        """
        client = _client("Question.sample")
        where = f"Question.sample({key!r}, ...)"
        unknown = [name for name in options if name not in _SAMPLING_OPTIONS]
        if unknown or "max_tokens" not in options:
            problem = f"unknown option {unknown[0]}=" if unknown else "max_tokens=... is required"
            raise TypeError(f"{where}: {problem} (it takes sample's: {', '.join(_SAMPLING_OPTIONS)})")
        request = _sampling_request(client, messages, where, **options)
        return Question(key, "sample", client.Request_Sample(request))

    @staticmethod
    def list_roots(key: str) -> Question:
        """A request for the client's roots; answered by a list of :class:`Root`."""
        return Question(key, "list_roots", _client("Question.list_roots").Request_ListRoots())

    def _answer(self, result: Any) -> Union[Elicitation, Sampled, list[Root], ClientError]:
        request = f"question {self.key}"
        if not isinstance(result, Ok):
            return ClientError(request, result.value.code, result.value.message)
        answer = result.value
        client = wit.client
        try:
            if self._form is not None and isinstance(answer, client.Answer_Elicit):
                return self._form.answer(answer.value, request)
        except ClientError as e:
            return e
        if self.kind == "sample" and isinstance(answer, client.Answer_Sample):
            return _sampled(answer.value)
        if self.kind == "list_roots" and isinstance(answer, client.Answer_Roots):
            return _roots(answer.value)
        return ClientError(request, "unavailable", f"the answer is not of the kind asked ({self.kind})")


def ask(questions: Sequence[Question]) -> list[Union[Elicitation, Sampled, list[Root], ClientError]]:
    """Asks every question in one round and waits until all are answered.

    Returns the answers in the questions' order, each of its question's
    kind (an :class:`Elicitation`, a :class:`Sampled`, a list of
    :class:`Root`) or, for a question that got no answer, a
    :class:`ClientError` in its place (not raised), with the host's code
    (``capability_not_granted``, ``unavailable``, ``blocked``...), so the
    others' answers are kept. Each question needs its own capability,
    declared and granted. Raises ``ValueError`` for more than 16 questions
    or a key used twice.

    Ask first: on MCP 2026-07-28 the call ends where it asks and runs again
    from the start with the answers, so ask the same questions (same keys,
    same order) before work that must not be done twice.
    """
    questions = list(questions)
    client = _client("ask")
    for q in questions:
        if not isinstance(q, Question):
            raise TypeError(f"ask: {q!r} is not a Question (make one with Question.elicit, .sample or .list_roots)")
    if len(questions) > MAX_QUESTIONS:
        raise ValueError(f"ask: one round holds at most {MAX_QUESTIONS} questions, not {len(questions)}")
    keys = [q.key for q in questions]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise ValueError(f"ask: the key {repeated[0]!r} names two questions of the round")
    results = client.ask([client.Question(q.key, q._request) for q in questions])
    return [q._answer(r) for q, r in zip(questions, results)]
