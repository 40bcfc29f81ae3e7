"""What a plugin asks of the host while it runs: logs, progress and nested
tool calls (questions to the client are in ``_client``)."""

from __future__ import annotations

import json
import typing
from typing import Any, Optional

from componentize_py_types import Err, Ok

from . import _bindings as wit
from ._content import Text, block_from_wit
from ._errors import CallError
from ._schema import dumps, to_json

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
