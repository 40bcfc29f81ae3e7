#!/usr/bin/env python3
"""Builds a Python plugin into a toolhost component (``toolhost:plugin@0.3.1``)
that imports only the host interfaces it uses.

usage: toolhost_build.py MODULE -o OUT.wasm [-p DIR]... [--wit WIT_DIR]
                         [--componentize-py PROGRAM]
       toolhost_build.py MODULE (--print-world | --print-section) [-p DIR]...

MODULE is the plugin's module (``app`` for ``app.py``), found in the ``-p``
folders (default: the current one); ``toolhost_plugin`` is found beside this
script. ``--wit`` is toolhost's ``wit/0.3.1`` folder, with its ``deps/``
(default: ``./wit``); ``--componentize-py`` the program (default: the one
on ``PATH``). ``--print-world`` prints the world the component would
target, ``--print-section`` the lines of its ``toolhost:capabilities``
section; both build nothing. Needs only the standard library.

componentize-py gives a component every import of the world it targets, so
this script writes the world: it reads the plugin's modules (MODULE and the
modules of the ``-p`` folders it imports, without running them) and imports
``toolhost:plugin/host`` when they use ``log``, ``progress`` for
``progress``, ``tools`` for ``call``/``call_many``, ``client`` for
``elicit``, ``sample``, ``list_roots``, ``ask``, ``Question``, ``available``
and ``begin_task``, and exports ``prompts`` and ``resources`` besides
``tool`` when they use ``prompt``, ``resource`` or ``resource_template``.
A plugin written against the bindings alone gets the interfaces it imports
from ``wit_world.imports`` (and the prompts and resources exports when its
module defines ``Prompts`` or ``Resources``). A name reached another way
(``getattr``, a module passed around) gives every import. The SDK checks
the result when the component is built: ``declare(sampling=True)`` without
the ``client`` import fails the build, naming what is missing.

What the ``declare()`` record cannot carry goes into a
``toolhost:capabilities`` custom section, appended to the component: the
script reads ``declare(roots=True)`` and ``@tool(task=..., deferred=...)``
from the same sources (``client roots``, ``task NAME optional|required
[deferred]`` lines), each argument written as a literal, and the component
checks while it is built that the plugin declared exactly that when it ran
(a declaration reached another way fails the build, saying so).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

VERSION = "0.3.1"
IMPORTS = ("host", "progress", "tools", "client")
SERVER = "server"
EVERYTHING = frozenset(IMPORTS + (SERVER,))
# What each name of toolhost_plugin needs from the world.
USES = {
    "log": {"host"},
    "progress": {"progress"},
    "call": {"tools"},
    "call_many": {"tools"},
    "elicit": {"client"},
    "sample": {"client"},
    "list_roots": {"client"},
    "ask": {"client"},
    "Question": {"client"},
    "available": {"client"},
    "begin_task": {"client"},
    "prompt": {SERVER},
    "resource": {SERVER},
    "resource_template": {SERVER},
    "Prompts": {SERVER},
    "Resources": {SERVER},
}
SDK = "toolhost_plugin"
# The name of the custom section holding the declarations `declare()` cannot return.
SECTION = "toolhost:capabilities"
TASK_SUPPORT = ("optional", "required")


class BuildError(Exception):
    """What went wrong, for the person building."""


def find_module(name: str, paths: list[Path]) -> Path | None:
    """The file of module ``name`` (dotted) in ``paths``, if it is there."""
    parts = name.split(".")
    for root in paths:
        base = root.joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


class Scan(ast.NodeVisitor):
    """What one module uses of toolhost_plugin (or of the raw bindings), and the modules it imports."""

    def __init__(self, module: str, is_package: bool, path: Path):
        self.module = module
        self.path = path
        self.package = module if is_package else module.rpartition(".")[0]
        self.uses: set[str] = set()
        self.imported: list[str] = []
        self.aliases: set[str] = set()  # names bound to the toolhost_plugin module
        self.attribute_values: set[int] = set()
        self.bound: dict[str, str] = {}  # local names bound to toolhost_plugin's names
        self.section: list[str] = []  # the toolhost:capabilities lines it declares
        self.decorators: set[int] = set()  # the @tool(...) calls read with their function
        self.uses_sdk = False

    def _absolute(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = self.package.split(".") if self.package else []
        base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
        return ".".join(base + ([node.module] if node.module else []))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] == SDK:
                self.uses_sdk = True
            if alias.name == SDK:
                self.aliases.add(alias.asname or SDK)
            elif alias.name.startswith(SDK + "."):
                self.uses |= EVERYTHING
            elif alias.name.startswith("wit_world.imports."):
                self.uses |= {alias.name.split(".")[2]} & set(IMPORTS)
            elif alias.name.split(".")[0] == "wit_world" and alias.name != "wit_world.exports":
                self.uses |= EVERYTHING
            else:
                self.imported.append(alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = self._absolute(node)
        names = [a.name for a in node.names]
        if module.split(".")[0] == SDK:
            self.uses_sdk = True
        if module == SDK:
            for alias in node.names:
                if alias.name == "*":
                    self.uses |= EVERYTHING
                    self.bound.update({n: n for n in ("declare", "tool")})
                else:
                    self.uses |= USES.get(alias.name, set())
                    self.bound[alias.asname or alias.name] = alias.name
        elif module.startswith(SDK + "."):
            self.uses |= EVERYTHING
        elif module == "wit_world.imports":
            self.uses |= EVERYTHING if "*" in names else set(names) & set(IMPORTS)
        elif module.startswith("wit_world.imports."):
            self.uses |= {module.split(".")[2]} & set(IMPORTS)
        elif module == "wit_world" and any(n not in ("exports",) for n in names):
            self.uses |= EVERYTHING
        elif module and not module.startswith("wit_world"):
            self.imported.append(module)
            self.imported.extend(f"{module}.{n}" for n in names if n != "*")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        # A module written against the bindings exports what it defines.
        if node.name in ("Prompts", "Resources") and self.module_level(node):
            self.uses.add(SERVER)
        self.generic_visit(node)

    def module_level(self, node: ast.AST) -> bool:
        return node in self.top_level

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.value, ast.Name) and node.value.id in self.aliases:
            self.attribute_values.add(id(node.value))
            self.uses |= USES.get(node.attr, set())
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        # The module itself passed around: anything may be reached through it.
        if node.id in self.aliases and id(node) not in self.attribute_values:
            self.uses |= EVERYTHING

    def sdk_name(self, func: ast.expr) -> str | None:
        """The toolhost_plugin name a called expression is (``declare``, ``th.tool``), if it is one."""
        if isinstance(func, ast.Name):
            return self.bound.get(func.id)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in self.aliases:
            return func.attr
        return None

    def literal(self, call: ast.Call, keyword: str, kind: type) -> object:
        """The literal value of ``keyword`` in ``call`` (None when absent); a BuildError when it is not a literal."""
        for kw in call.keywords:
            if kw.arg == keyword:
                if isinstance(kw.value, ast.Constant) and type(kw.value.value) is kind:
                    return kw.value.value
                raise BuildError(
                    f"{self.path}:{kw.value.lineno}: write {keyword}= as a {kind.__name__} literal: "
                    f"it goes into the component's {SECTION} section, which toolhost_build.py reads "
                    "from the source without running the plugin"
                )
        return None

    def tool_line(self, call: ast.Call, function: str | None) -> None:
        """The section line of a ``tool(...)`` call's task support, if it states one."""
        task = self.literal(call, "task", str)
        deferred = self.literal(call, "deferred", bool)
        if task is None:
            return
        if task not in TASK_SUPPORT:
            raise BuildError(f"{self.path}:{call.lineno}: task={task!r}: write task=\"optional\" or task=\"required\"")
        name = self.literal(call, "name", str)
        if name is None and function is None and call.args and isinstance(call.args[0], ast.Name):
            function = call.args[0].id
        name = name or function
        if name is None:
            raise BuildError(f"{self.path}:{call.lineno}: give tool(..., task=...) its name= as a string literal")
        self.section.append(f"task {name} {task}" + (" deferred" if deferred else ""))

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        for decorator in node.decorator_list:
            if isinstance(decorator, ast.Call) and self.sdk_name(decorator.func) == "tool":
                self.decorators.add(id(decorator))
                self.tool_line(decorator, node.name)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> None:
        name = self.sdk_name(node.func)
        if name == "declare" and self.literal(node, "roots", bool):
            self.section.append("client roots")
        elif name == "tool" and id(node) not in self.decorators:
            self.tool_line(node, None)
        self.generic_visit(node)

    def run(self, tree: ast.Module) -> None:
        self.top_level = set(tree.body)
        self.visit(tree)


@dataclasses.dataclass
class Plugin:
    """What the plugin's modules need of the world and declare, read from their sources."""

    uses: set[str] = dataclasses.field(default_factory=set)
    notes: list[str] = dataclasses.field(default_factory=list)
    """For the person building."""
    section: list[str] = dataclasses.field(default_factory=list)
    """The lines of its ``toolhost:capabilities`` section."""
    uses_sdk: bool = False


def scan(module: str, paths: list[Path]) -> Plugin:
    """What the plugin's modules need of the world and declare."""
    plugin = Plugin()
    uses, notes = plugin.uses, plugin.notes
    seen: set[str] = set()
    queue = [module]
    first = True
    while queue:
        name = queue.pop()
        if name in seen:
            continue
        seen.add(name)
        path = find_module(name, paths)
        if path is None:
            if first:
                raise BuildError(f"no module {module} in {', '.join(str(p) for p in paths)}")
            continue  # the standard library, or a module of no -p folder
        first = False
        try:
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except SyntaxError as e:
            notes.append(f"cannot read {path} with Python {sys.version.split()[0]} ({e.msg}): importing every interface")
            uses |= EVERYTHING
            plugin.uses_sdk = True
            continue
        s = Scan(name, path.name == "__init__.py", path)
        s.run(tree)
        uses |= s.uses
        plugin.uses_sdk |= s.uses_sdk
        plugin.section += [line for line in s.section if line not in plugin.section]
        queue.extend(s.imported)
    return plugin


def world(uses: set[str]) -> str:
    imports = "".join(f"  import toolhost:plugin/{i}@{VERSION};\n" for i in IMPORTS if i in uses)
    exports = ["tool"] + (["prompts", "resources"] if SERVER in uses else [])
    return (
        "// Written by toolhost_build.py: the interfaces of toolhost:plugin this plugin uses.\n"
        "package toolhost-build:plugin;\n\n"
        "world component {\n"
        + imports
        + "".join(f"  export toolhost:plugin/{e}@{VERSION};\n" for e in exports)
        + "}\n"
    )


def wrapper(module: str, plugin: Plugin) -> str:
    """The module componentize-py builds: the plugin's, with the exports it
    looks for, checking (while it is built) the section read from the source."""
    exports = ["Tool"] + (["Prompts", "Resources"] if SERVER in plugin.uses else [])
    lines = [
        "# Written by toolhost_build.py: the plugin's module, and the exports componentize-py looks for.",
        f"import {module} as _plugin",
        "",
    ]
    if plugin.uses_sdk:
        lines += [
            f"from {SDK}._tools import check_section",
            "",
            f"check_section({section_text(plugin)!r})",
        ]
    for name in exports:
        lines += [
            f"{name} = getattr(_plugin, {name!r}, None)",
            f"if {name} is None:",
            f"    from {SDK} import {name}",
        ]
    return "\n".join(lines) + "\n"


def section_text(plugin: Plugin) -> str:
    return "".join(line + "\n" for line in plugin.section)


def leb128(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def append_section(component: Path, text: str) -> None:
    """Appends a ``toolhost:capabilities`` custom section holding ``text`` to
    ``component`` (a custom section at the end of a component is valid, and
    changes nothing but the declaration and the hash)."""
    name = SECTION.encode()
    payload = leb128(len(name)) + name + text.encode()
    with component.open("ab") as f:
        f.write(b"\0" + leb128(len(payload)) + payload)


def wit_folder(wit: Path, into: Path, uses: set[str]) -> Path:
    """A WIT folder holding the plugin's world, with toolhost's package and its dependencies as deps."""
    main = wit / "plugin.wit"
    if not main.is_file():
        raise BuildError(f"{wit} has no plugin.wit: give --wit toolhost's wit/{VERSION} folder")
    package = re.search(r"^package\s+([^;]+);", main.read_text(encoding="utf-8"), re.M)
    if not package or package.group(1).strip() != f"toolhost:plugin@{VERSION}":
        found = package.group(1).strip() if package else "no package"
        raise BuildError(f"{main} is {found}; this SDK targets toolhost:plugin@{VERSION} (wit/{VERSION})")
    out = into / "wit"
    deps = out / "deps"
    (deps / "toolhost-plugin").mkdir(parents=True)
    # Copies, not links: jco's and componentize-py's WIT readers may not follow links.
    shutil.copy(main, deps / "toolhost-plugin" / "plugin.wit")
    if (wit / "deps").is_dir():
        for dep in sorted((wit / "deps").iterdir()):
            (shutil.copytree if dep.is_dir() else shutil.copy)(dep, deps / dep.name)
    (out / "world.wit").write_text(world(uses), encoding="utf-8")
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="toolhost_build.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("module", help="the plugin's module, e.g. app")
    parser.add_argument("-o", "--output", help="the component to write")
    parser.add_argument("--print-world", action="store_true", help="print the world the component would target; build nothing")
    parser.add_argument(
        "--print-section", action="store_true", help=f"print the lines of the component's {SECTION} section; build nothing"
    )
    parser.add_argument("-p", "--python-path", action="append", default=[], help="a folder of the plugin's modules (default: .)")
    parser.add_argument("--wit", default="wit", help=f"toolhost's wit/{VERSION} folder (default: ./wit)")
    parser.add_argument("--componentize-py", default="componentize-py", help="the componentize-py program")
    args = parser.parse_args(argv)
    if not args.print_world and not args.print_section and not args.output:
        parser.error("give -o OUT.wasm (or --print-world, --print-section)")

    sdk_dir = Path(__file__).resolve().parent
    paths = [Path(p).resolve() for p in (args.python_path or ["."])]
    try:
        plugin = scan(args.module, paths)
        uses, notes = plugin.uses, plugin.notes
        if args.print_world or args.print_section:
            for note in notes:
                print(f"toolhost_build: {note}", file=sys.stderr)
            print(world(uses) if args.print_world else section_text(plugin), end="")
            return 0
        with tempfile.TemporaryDirectory(prefix="toolhost-build-") as tmp:
            tmp_dir = Path(tmp)
            wit = wit_folder(Path(args.wit).resolve(), tmp_dir, uses)
            (tmp_dir / "toolhost_component.py").write_text(wrapper(args.module, plugin), encoding="utf-8")
            for note in notes:
                print(f"toolhost_build: {note}", file=sys.stderr)
            imports = ", ".join(i for i in IMPORTS if i in uses) or "none"
            exports = "tool, prompts, resources" if SERVER in uses else "tool"
            declares = f"; declares {', '.join(plugin.section)}" if plugin.section else ""
            print(f"toolhost_build: imports {imports}; exports {exports}{declares}", file=sys.stderr)
            search = [tmp_dir] + paths + ([sdk_dir] if sdk_dir not in paths else [])
            command = [args.componentize_py, "-d", str(wit), "-w", "component", "componentize"]
            for p in search:
                command += ["-p", str(p)]
            command += ["toolhost_component", "-o", os.path.abspath(args.output)]
            try:
                code = subprocess.run(command).returncode
            except FileNotFoundError:
                raise BuildError(f"cannot run {args.componentize_py}: install componentize-py (pip install componentize-py==0.25.1)") from None
            if code == 0 and plugin.section:
                append_section(Path(args.output), section_text(plugin))
            return code
    except BuildError as e:
        print(f"toolhost_build: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
