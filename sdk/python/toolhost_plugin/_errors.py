"""The exceptions a plugin raises and the ones the host's services raise."""

from __future__ import annotations


class InvalidArguments(ValueError):
    """The arguments do not fit the tool or prompt: becomes ``invalid-arguments``."""


class ToolFailed(Exception):
    """The tool could not do its work: becomes ``failed`` with this message alone."""


class ResourceNotFound(Exception):
    """A resource read found nothing at that URI: becomes ``not-found``."""


class HostError(Exception):
    """Something the plugin asked of the host did not happen (WIT ``host-error``).

    ``code`` is the host's error code: ``capability_not_granted`` (not
    declared, or not granted by the operator), ``unavailable`` (no client
    that can answer), ``blocked``, ``timeout``, ``cancelled``,
    ``invalid_arguments``, ``unknown_tool``, ``tool_failed``, ... Uncaught,
    it fails the tool with its message.
    """

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class CallError(HostError):
    """A nested call (:func:`call`, :func:`call_many`) did not produce a result."""

    def __init__(self, tool: str, code: str, message: str):
        super().__init__(code, message)
        self.args = (f"calling {tool} failed ({code}): {message}",)
        self.tool = tool


class ClientError(HostError):
    """A question to the client (:func:`elicit`, :func:`sample`) got no answer."""

    def __init__(self, request: str, code: str, message: str):
        super().__init__(code, message)
        self.args = (f"{request} failed ({code}): {message}",)
        self.request = request
