"""A Python plugin whose tool raises past the helper (a BaseException, which
toolhost_plugin does not turn into a tool error): componentize-py prints the
traceback to stderr and traps. The host must quote that traceback in the
`trap` error (tests/all/diagnostics.rs)."""

from toolhost_plugin import Tool, tool  # noqa: F401 (Tool is the export)


class Boom(BaseException):
    """Not an Exception: nothing in the helper catches it."""


@tool()
def crash(what: str) -> str:
    """Raises past the helper.

    Args:
        what: Put in the exception's message.
    """
    raise Boom(f"the widget {what} broke")
