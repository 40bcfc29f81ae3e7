"""The generated bindings (componentize-py's ``wit_world``) of this component.

A component imports only the interfaces it uses (``toolhost_build.py``
chooses them from what the plugin's modules import from ``toolhost_plugin``),
so an interface the build left out is ``None`` here; the function that needs
it says so when called.
"""

from __future__ import annotations

from wit_world.imports import types  # noqa: F401 (always there: the tool export uses it)

try:
    from wit_world.imports import host
except ImportError:
    host = None
try:
    from wit_world.imports import progress
except ImportError:
    progress = None
try:
    from wit_world.imports import tools
except ImportError:
    tools = None
try:
    from wit_world.imports import client
except ImportError:
    client = None
try:
    from wit_world.exports import prompts
except ImportError:
    prompts = None
try:
    from wit_world.exports import resources
except ImportError:
    resources = None


def missing(interface: str, uses: str) -> RuntimeError:
    """The error for a function whose interface this component does not import."""
    return RuntimeError(
        f"this component was built without toolhost:plugin/{interface}, which {uses} needs: "
        f"build it with toolhost_build.py, which adds the import when a module of the plugin "
        f"imports {uses} from toolhost_plugin (by name, or as an attribute of the module)"
    )
