"""A venv holding petstore with some of its extras only, made from the test venv's own packages (no download).

:func:`lean_venv` creates a venv without pip and puts on its path a directory of links to the top-level
modules of exactly the distributions that ``pip install 'petstore[EXTRAS]'`` would install, found from the
installed metadata (petstore's requirements, their markers evaluated, recursively), and the source tree for
petstore itself. Its ``python -m petstore_cli`` then runs as after that install: another extra's modules cannot
be imported. (The README's ``pip install .`` in a fresh venv is the same check, made by hand.)
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from collections.abc import Iterable
from importlib.metadata import Distribution, PackageNotFoundError, distribution
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def distributions(extras: Iterable[str] = ()) -> dict[str, Distribution]:
    """The installed distributions ``petstore[extras]`` requires, petstore's own excluded; by canonical name."""
    found: dict[str, Distribution] = {}
    todo: list[tuple[str, frozenset[str]]] = [("petstore", frozenset(extras))]
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        name, wanted = todo.pop()
        key = (canonicalize_name(name), wanted)
        if key in seen:
            continue
        seen.add(key)
        try:
            dist = distribution(name)
        except PackageNotFoundError:  # an optional dependency of a dependency, not installed here
            continue
        if key[0] != "petstore":
            found[key[0]] = dist
        for line in dist.requires or []:
            requirement = Requirement(line)
            markers = [{"extra": extra} for extra in wanted] or [{"extra": ""}]
            if requirement.marker is None or any(requirement.marker.evaluate(env) for env in markers):
                todo.append((requirement.name, frozenset(requirement.extras)))
    return found


def _top_level(dist: Distribution) -> set[str]:
    """The names a distribution installs at the top of site-packages (packages, modules, extension modules)."""
    names = set()
    for file in dist.files or []:
        first = file.parts[0]
        if first in {"..", "__pycache__"} or first.endswith((".dist-info", ".pth", ".egg-info")):
            continue
        names.add(first)
    return names


def lean_venv(where: Path, extras: Iterable[str] = ()) -> Path:
    """A venv at ``where`` as after ``pip install 'petstore[extras]'``; returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    site = Path(sysconfig.get_paths()["purelib"])
    links = where / "petstore-deps"
    links.mkdir()
    for dist in distributions(extras).values():
        for name in _top_level(dist):
            source = site / name
            if source.exists() and not (links / name).exists():
                (links / name).symlink_to(source)
    python = where / "bin" / "python"
    lean_site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(lean_site) / "petstore.pth").write_text(f"{ROOT}\n{links}\n")
    return python
