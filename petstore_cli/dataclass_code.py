"""Dataclass methods compiled once, then kept on disk as Python keeps bytecode (issue 20).

``@dataclass`` writes the source of each method it adds (``__init__``, ``__repr__``, ``__eq__``,
the frozen ``__setattr__``, ...) and compiles it, in every process, for every dataclass: the
command layer's results and views, the client's policies, and the libraries' own (pydantic,
anyio, h11). ``petstore run -c /list`` creates ~130 of them: ~39 ms of a ~185 ms run, 60 % of it
in ``compile``. The program (``main()``, not callers in-process) installs :func:`install`: the
same generated source, compiled once and kept as marshalled code objects in the user's cache
dir (like a ``.pyc``: same user, same trust), looked up by its exact text thereafter. What the
methods do is unchanged: only where their code object comes from.

Only on Pythons whose ``dataclasses._create_fn`` is the one reproduced here (3.11, 3.12; 3.13
builds methods another way): elsewhere nothing is installed. A missing, unreadable or garbled
cache file is a cache miss; new entries are written at exit, atomically.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import marshal
import os
import sys
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType
from typing import Any

#: How entries are compiled: a change makes a new file (older entries are never read).
FORMAT = 1
#: The file in the cache dir: the interpreter's tag and bytecode magic number (code objects are per Python
#: bytecode, as a ``.pyc`` is).
CACHE_FILE = f"dataclass-code-{FORMAT}-{sys.implementation.cache_tag}-{MAGIC_NUMBER.hex()}.marshal"
#: ``dataclasses._create_fn``'s parameters where it is the function reproduced by :func:`_create_fn`.
KNOWN_PARAMETERS = ("name", "args", "body", "globals", "locals", "return_type")
#: The return annotation's local name in 3.12's ``_create_fn`` and in 3.11's.
RETURN_LOCALS = ("__dataclass_return_type__", "_return_type")


class CodeCache:
    """Generated source text -> its code object; read from ``path`` on first use, new entries saved."""

    def __init__(self, path: Path | str | None = None) -> None:
        self._path = Path(path) if path is not None else None
        self._codes: dict[str, CodeType] | None = None
        self.new: dict[str, CodeType] = {}

    @property
    def path(self) -> Path:
        if self._path is None:
            from petstore_api.paths import default_cache_dir

            self._path = default_cache_dir() / CACHE_FILE
        return self._path

    def code(self, text: str) -> CodeType:
        codes = self._codes if self._codes is not None else self._load()
        found = codes.get(text)
        if found is None:
            # dont_inherit: this module's ``from __future__ import annotations`` would make the
            # methods' annotations strings (the stdlib's exec compiles without it).
            found = codes[text] = self.new[text] = compile(text, "<string>", "exec", dont_inherit=True)
        return found

    def _load(self) -> dict[str, CodeType]:
        self._codes = read(self.path)
        return self._codes

    def save(self) -> None:
        """Write the entries compiled in this process (merged with the file's: another process may have
        written since); never raises (a cache that cannot be written is only slower)."""
        if not self.new:
            return
        with contextlib.suppress(OSError, ValueError):
            merged = {**read(self.path), **self.new}
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            tmp.write_bytes(marshal.dumps(merged))
            os.replace(tmp, self.path)
            self.new = {}


def read(path: Path) -> dict[str, CodeType]:
    """The cache file's entries; empty when it is missing, unreadable or not what this module writes."""
    try:
        data = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, CodeType) for k, v in data.items()):
        return {}
    return data


def return_local() -> str | None:
    """The name ``dataclasses._create_fn`` gives the return annotation (3.11: ``_return_type``, 3.12:
    ``__dataclass_return_type__``), where it is the function reproduced in :func:`install`; else None."""
    original = getattr(dataclasses, "_create_fn", None)
    code = getattr(original, "__code__", None)
    if (
        sys.version_info[:2] not in {(3, 11), (3, 12)}
        or code is None
        or code.co_varnames[: len(KNOWN_PARAMETERS)] != KNOWN_PARAMETERS
        or code.co_kwonlyargcount != 3
    ):
        return None
    return next((name for name in RETURN_LOCALS if name in code.co_consts), None)


def applies() -> bool:
    """Whether this Python's ``dataclasses._create_fn`` is the one :func:`install` reproduces."""
    return return_local() is not None


def install(cache: CodeCache | None = None) -> CodeCache | None:
    """Make ``@dataclass`` take its methods' code from ``cache`` (saved at exit); None where it does not apply."""
    returns = return_local()
    if returns is None:
        return None
    cache = cache if cache is not None else CodeCache()

    def _create_fn(
        name: str,
        args: list[str],
        body: list[str],
        *,
        globals: dict[str, Any] | None = None,
        locals: dict[str, Any] | None = None,
        return_type: Any = dataclasses.MISSING,
    ) -> Any:
        # dataclasses._create_fn of 3.11/3.12, with compile() replaced by the cache's code.
        if locals is None:
            locals = {}
        return_annotation = ""
        if return_type is not dataclasses.MISSING:
            locals[returns] = return_type
            return_annotation = f"->{returns}"
        joined = ",".join(args)
        lines = "\n".join(f"  {b}" for b in body)
        text = f" def {name}({joined}){return_annotation}:\n{lines}"
        text = f"def __create_fn__({', '.join(locals.keys())}):\n{text}\n return {name}"
        ns: dict[str, Any] = {}
        exec(cache.code(text), globals, ns)
        return ns["__create_fn__"](**locals)

    dataclasses._create_fn = _create_fn  # type: ignore[attr-defined]
    atexit.register(cache.save)
    return cache
