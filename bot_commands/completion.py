"""Completion derived from the registry: command names, flags, values, seen pet ids."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .arguments import Arg, CompletionContext
from .errors import UsageError
from .parser import tokenize
from .registry import Command, Registry

__all__ = ["complete_words"]


def _matching(options: Iterable[str], current: str) -> list[str]:
    prefix = current.lower()
    seen: list[str] = []
    for option in options:
        if option.lower().startswith(prefix) and option not in seen:
            seen.append(option)
    return seen


def _values(arg: Arg, context: CompletionContext) -> list[str]:
    if callable(arg.choices):
        return list(arg.choices(context))
    return list(arg.choices)


def complete_words(
    registry: Registry, line: str, *, ids: Sequence[str] = (), names: Sequence[str] | None = None
) -> tuple[str, list[str]]:
    """``(current word as typed, replacements for it)`` for the text before the cursor.

    ``names``: the command names (aliases too) the actor may run; only those are offered.
    """
    allowed = list(registry.names()) if names is None else list(names)
    match = re.search(r"\S*$", line)
    current = match.group(0) if match else ""
    head = line[: len(line) - len(current)]
    try:
        words = tokenize(head)
    except UsageError:
        return current, []
    if not words:
        bare = current.lstrip("/")
        slash = "" if current and not current.startswith("/") else "/"
        return current, [slash + n for n in _matching(allowed, bare)]
    cmd = registry.get(words[0])
    if cmd is None or words[0].lstrip("/").lower() not in allowed:
        return current, []
    canonical = [c.name for c in registry.commands() if c.name in allowed]
    return current, _arguments(cmd, words[1:], current, ids, canonical)


def _arguments(cmd: Command, words: list[str], current: str, ids: Sequence[str], names: list[str]) -> list[str]:
    flags = cmd.flags
    keys = {k.lower(): a for a in cmd.args for k in a.keys}
    positional, used = _classify(cmd, words)
    context = CompletionContext(positional=positional, ids=ids, names=names)
    if words and words[-1].lower() in flags and not flags[words[-1].lower()].switch:
        return _matching(_values(flags[words[-1].lower()], context), current)
    if "=" in current and current.split("=", 1)[0].lower() in keys:
        key, partial = current.split("=", 1)
        values = _values(keys[key.lower()], context)
        return [f"{key}={v}" for v in _matching(values, partial)]
    free_flags = [f for f in flags if f not in used]
    if current.startswith("-"):
        return _matching(free_flags, current)
    candidates = []
    slots = cmd.positionals
    index = min(len(positional), len(slots) - 1) if slots else -1
    if index >= 0 and (index == len(positional) or slots[index].greedy):
        candidates = _matching(_values(slots[index], context), current)
    return candidates + (free_flags if not current else [])


def _classify(cmd: Command, words: list[str]) -> tuple[list[str], set[str]]:
    """Positional words typed so far, and the flags already used."""
    flags = cmd.flags
    keys = {k.lower() for a in cmd.args for k in a.keys}
    positional: list[str] = []
    used: set[str] = set()
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word.lower() in flags:
            used.add(word.lower())
            skip = not flags[word.lower()].switch
        elif not ("=" in word and word.split("=", 1)[0].lower() in keys) and not word.startswith("--"):
            positional.append(word)
    return positional, used
