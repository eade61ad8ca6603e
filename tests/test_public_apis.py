"""petstore uses other libraries through their public names only, and changes nothing process-wide.

Checked on every module of every package, statically (the source) and, for the classes that
subclass another library's, at run time (what the base classes define):

- nothing is put into or taken out of ``sys.modules``;
- no CPU affinity is set (``sched_setaffinity``);
- no private name of another library: ``from x import _y``, ``import x._y``, ``x._y`` on anything
  but petstore's own objects, and no ``self._y`` where ``_y`` belongs to a base class of another
  library (using it, or clobbering it by accident).

The exceptions, each with its reason: argparse's action introspection (``_actions``,
``_choices_actions``, ``_SubParsersAction``: argparse has no public way to list a parser's options,
and completion generators such as shtab and argcomplete read them so), ``os._exit`` (public and
documented: how a child process ends), and textual-serve's process hooks in petstore_web (no public
API to start the app process; pyproject.toml pins textual-serve to its minor version).
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
#: Every package of the project, as pyproject.toml lists them.
PACKAGES = tuple(pattern.rstrip("*") for pattern in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"])
#: argparse's action introspection: the modules that read a parser's options, and the names they may use.
ARGPARSE_MODULES = {"petstore_cli/completion.py", "petstore_cli/subcommands.py", "petstore_cli/options.py"}
ARGPARSE_NAMES = {"_actions", "_choices_actions", "_SubParsersAction"}
#: Private-looking names that are public API.
PUBLIC = {("os", "_exit")}
#: (module, class) -> the other library's base whose private hooks it overrides, pinned in pyproject.toml.
PINNED_HOOKS = {("petstore_web.sessions", "AppProcess"): "textual-serve"}
#: (module, class) -> the libraries whose public hooks it overrides, pinned too (the class is still checked for
#: private names): the guard's protocol overrides uvicorn's httptools protocol's parser callbacks.
PINNED_BASES = (
    (("petstore_server.guard", "GuardedHttpToolsProtocol"), "uvicorn"),
    (("petstore_server.guard", "GuardedHttpToolsProtocol"), "httptools"),
)


def private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def ours(module: str) -> bool:
    return module.split(".")[0] in PACKAGES


def sources() -> Iterator[tuple[str, ast.Module]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield str(path.relative_to(ROOT)), ast.parse(path.read_text(encoding="utf-8"))


SOURCES = dict(sources())


def own_private_names() -> set[str]:
    """Private names petstore defines itself: functions, classes, module and class attributes, ``self.``/``cls.``
    attributes, parameters."""
    names: set[str] = set()
    for tree in SOURCES.values():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name)
                and node.value.id in {"self", "cls"}
            ):
                names.add(node.attr)
    return {name for name in names if private(name)}


def imported_modules(tree: ast.Module) -> dict[str, str]:
    """Local name -> the module it is bound to, for ``import x`` / ``import x.y as z`` in ``tree``."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
    return bound


#: dict methods that change ``sys.modules``.
MUTATORS = {"setdefault", "update", "pop", "popitem", "clear", "__setitem__", "__delitem__"}


def is_sys_modules(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "modules" and ast.unparse(node.value) == "sys"


def test_no_module_changes_sys_modules() -> None:
    found = []
    for path, tree in SOURCES.items():
        for node in ast.walk(tree):
            stored = (
                isinstance(node, ast.Subscript) and is_sys_modules(node.value) and not isinstance(node.ctx, ast.Load)
            )
            called = (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in MUTATORS
                and is_sys_modules(node.func.value)
            )
            bound = isinstance(node, ast.Assign) and any(map(is_sys_modules, node.targets))
            if stored or called or bound:
                found.append(f"{path}:{node.lineno} {ast.unparse(node)}")
    assert found == []


def test_nothing_sets_cpu_affinity() -> None:
    found = [
        f"{path}:{node.lineno}"
        for path, tree in SOURCES.items()
        for node in ast.walk(tree)
        if (isinstance(node, ast.Attribute) and node.attr == "sched_setaffinity")
        or (isinstance(node, ast.Name) and node.id == "sched_setaffinity")
        or (isinstance(node, ast.alias) and node.name == "sched_setaffinity")
    ]
    assert found == []


def test_no_private_name_of_another_library_is_imported() -> None:
    found = []
    for path, tree in SOURCES.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and not ours(node.module):
                names = [alias.name for alias in node.names]
                if any(private(part) for part in node.module.split(".")) or any(map(private, names)):
                    found.append(f"{path}:{node.lineno} from {node.module} import {', '.join(names)}")
            elif isinstance(node, ast.Import):
                found += [
                    f"{path}:{node.lineno} import {alias.name}"
                    for alias in node.names
                    if not ours(alias.name) and any(private(part) for part in alias.name.split("."))
                ]
    assert found == []


def test_no_private_attribute_of_another_library_is_used() -> None:
    """``x._y`` where ``_y`` is not a name petstore defines (a module's private function, another library's
    attribute), or ``module._y`` on another library's module."""
    own = own_private_names()
    found = []
    for path, tree in SOURCES.items():
        modules = imported_modules(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or not private(node.attr):
                continue
            if isinstance(node.value, ast.Name) and node.value.id in {"self", "cls"}:
                continue  # the runtime check below
            root = node.value.id if isinstance(node.value, ast.Name) else None
            library = modules.get(root) if root is not None else None
            if library is not None and (library, node.attr) in PUBLIC:
                continue
            if path in ARGPARSE_MODULES and node.attr in ARGPARSE_NAMES:
                continue
            if (library is not None and not ours(library)) or node.attr not in own:
                found.append(f"{path}:{node.lineno} {ast.unparse(node)}")
    assert found == []


def _classes() -> Iterator[tuple[str, ast.ClassDef, type]]:
    for path, tree in SOURCES.items():
        parts = list(Path(path).with_suffix("").parts)
        if parts[-1] == "__main__":
            continue
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        module = importlib.import_module(name)
        for node in ast.walk(tree):
            cls = getattr(module, node.name, None) if isinstance(node, ast.ClassDef) else None
            if isinstance(node, ast.ClassDef) and inspect.isclass(cls) and cls.__module__ == name:
                yield name, node, cls


SELF_ATTRIBUTE = re.compile(r"\bself\.(_[A-Za-z0-9]\w*)")


@functools.cache
def defined_private_names(base: type) -> frozenset[str]:
    """The private names ``base`` defines: its class attributes and the ``self._x`` in its source. Cached: many
    classes share a base (Textual's Widget), and finding a class's source parses its whole module."""
    found = {name for name in vars(base) if private(name)}
    try:
        found |= set(SELF_ATTRIBUTE.findall(inspect.getsource(base)))
    except (OSError, TypeError):  # pragma: no cover - a base without Python source
        pass
    return frozenset(found)


def foreign_private_names(cls: type) -> dict[str, str]:
    """Private names another library's base classes of ``cls`` define -> the base's name."""
    names: dict[str, str] = {}
    for base in cls.__mro__[1:]:
        if ours(base.__module__) or base.__module__ == "builtins":
            continue
        for name in defined_private_names(base):
            names.setdefault(name, f"{base.__module__}.{base.__qualname__}")
    return names


def test_no_class_uses_a_private_name_of_its_base_from_another_library() -> None:
    found = []
    for module, node, cls in _classes():
        if (module, node.name) in PINNED_HOOKS:
            continue
        foreign = foreign_private_names(cls)
        used = {
            attribute.attr
            for attribute in ast.walk(node)
            if isinstance(attribute, ast.Attribute)
            and isinstance(attribute.value, ast.Name)
            and attribute.value.id in {"self", "cls"}
        }
        used |= {item.name for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
        found += [f"{module}.{node.name}.{name} (of {foreign[name]})" for name in sorted(used & set(foreign))]
    assert found == []


@pytest.mark.parametrize(("where", "distribution"), sorted(PINNED_HOOKS.items()) + list(PINNED_BASES))
def test_a_library_whose_hooks_are_overridden_is_pinned_to_its_minor_version(
    where: tuple[str, str], distribution: str
) -> None:
    project = PYPROJECT["project"]
    requirements = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    pins = [r for r in requirements if re.match(rf"{re.escape(distribution)}\b", r)]
    assert pins and all(re.search(r"(~=\d+\.\d+\.\d+|<\d+\.\d+\b)", pin) for pin in pins), pins
    source = (ROOT / (where[0].replace(".", "/") + ".py")).read_text(encoding="utf-8")
    assert f"pins {distribution} to its minor version" in source  # said beside the use
