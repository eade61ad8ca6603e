"""No import cycle inside any of our packages.

Every ``import`` statement of every module counts, wherever it stands: at the top, inside a function (a lazy
import), or under ``if TYPE_CHECKING:`` (a cycle there is still two modules that each need the other to be
understood). ``from . import x`` imports the package's ``__init__`` (and ``x`` when it is a module);
``from .a import b`` imports ``a`` (and ``a.b`` when it is a module).
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
#: Every package the project installs.
PACKAGES = [pattern.rstrip("*") for pattern in _PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]]


def module_files(package: str) -> dict[str, Path]:
    """Dotted module name -> its file, for every module of ``package`` (a package's name is its ``__init__``)."""
    found = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _base(module: str, path: Path, level: int) -> str:
    """The package a relative import of ``level`` dots in ``module`` starts from."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(level - 1):
        package = package.rpartition(".")[0]
    return package


def imported(module: str, path: Path, known: set[str]) -> Iterator[str]:
    """The modules of ``known`` that ``module`` imports, anywhere in its file."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.name
                while name and name not in known:  # import a.b.c: the deepest module of ours it names
                    name = name.rpartition(".")[0]
                if name:
                    yield name
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                source = ".".join(filter(None, [_base(module, path, node.level), source]))
            if source in known:
                yield source
            for alias in node.names:
                if f"{source}.{alias.name}" in known:
                    yield f"{source}.{alias.name}"


def graph(package: str) -> dict[str, set[str]]:
    files = module_files(package)
    known = set(files)
    return {name: set(imported(name, path, known)) - {name} for name, path in files.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle_inside_a_package(package: str) -> None:
    assert cycles(graph(package)) == []


def test_the_checker_sees_every_kind_of_import(tmp_path: Path) -> None:
    """A cycle through a lazy import, a TYPE_CHECKING import or ``from . import x`` is found."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "from .a import A\n",
        "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\nA = 1\n",
        "b.py": "def f():\n    from . import c\n",
        "c.py": "from . import __version__\n",
        "sub/__init__.py": "",
        "sub/d.py": "from .. import e\n",
        "e.py": "import pkg.sub.d\n",
    }
    for name, text in files.items():
        (pkg / name).write_text(text, encoding="utf-8")
    paths = {".".join(["pkg", *Path(n).with_suffix("").parts]).removesuffix(".__init__"): pkg / n for n in files}
    edges = {name: set(imported(name, path, set(paths))) - {name} for name, path in paths.items()}
    assert edges["pkg.b"] == {"pkg", "pkg.c"} and edges["pkg.c"] == {"pkg"}
    assert cycles(edges) == [["pkg", "pkg.a", "pkg.b", "pkg.c"], ["pkg.e", "pkg.sub.d"]]
