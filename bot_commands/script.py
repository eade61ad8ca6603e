"""Scripts of slash commands, and the one engine that plays them for every face.

One command a line; ``#`` comments and blank lines skipped. Line numbers are
kept so a failing command (or ``/expect``) can name its line. ``$last`` and
``/sleep`` are handled by the session like any line; :func:`play_script`
judges failures (``/expect`` after a failure, ``--keep-going``) and gives the
exit code: ``petstore run``, ``petstore tui --play`` and the chat bots drive it
with a small :class:`ScriptFace` each.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from petstore_os.records import record

from .outcome import Outcome, worst_exit_code
from .results import Quit

if TYPE_CHECKING:  # pragma: no cover
    from .registry import Registry

__all__ = [
    "HistoryEntry",
    "ScriptFace",
    "ScriptLine",
    "ScriptReport",
    "command_word",
    "history_script",
    "parse_script",
    "play_script",
    "read_script",
    "script_lines",
]

HEADER = "# petstore script, saved by /history save; replay with: petstore run FILE"


@record
class HistoryEntry:
    """One executed line; ``ok`` is False when the command failed."""

    line: str
    ok: bool = True
    command: str = ""


def parse_script(text: str | Iterable[str]) -> list[tuple[int, str]]:
    """``(line number, command)`` for every line that is not blank or a comment."""
    lines = text.splitlines() if isinstance(text, str) else [str(t).rstrip("\r\n") for t in text]
    out: list[tuple[int, str]] = []
    for number, raw in enumerate(lines, start=1):
        line = raw.lstrip("\ufeff").strip() if number == 1 else raw.strip()
        if line and not line.startswith("#"):
            out.append((number, line))
    return out


def read_script(path: str | Path) -> list[tuple[int, str]]:
    """Read a UTF-8 script file (raises OSError / UnicodeDecodeError)."""
    return parse_script(Path(path).read_text(encoding="utf-8-sig"))


def command_word(line: str) -> str:
    """The command name of a line, lower-cased and without ``/`` ('' if none)."""
    parts = line.split(maxsplit=1)
    return parts[0].lstrip("/").lower() if parts else ""


def history_script(entries: Sequence[HistoryEntry]) -> list[str]:
    """Lines of a script that replays ``entries``.

    A failed command is kept live only when an ``/expect`` follows it (a demo
    of an error); otherwise it is written as a comment, so the replay is green.
    """
    lines: list[str] = []
    for index, entry in enumerate(entries):
        nxt = entries[index + 1] if index + 1 < len(entries) else None
        if entry.ok or (nxt is not None and nxt.command == "expect"):
            lines.append(entry.line)
        else:
            lines.append(f"# failed: {entry.line}")
    return lines


# --------------------------------------------------------------------------- the engine


@record
class ScriptLine:
    """One command of a script: where it came from (a line number, or ``-c 2``) and its text."""

    where: int | str
    line: str

    @property
    def label(self) -> str:
        return f"line {self.where}" if isinstance(self.where, int) else self.where


@record
class ScriptReport:
    """How a script ended: ``exit_code`` 0, 1 or 2 (see :func:`bot_commands.outcome.worst_exit_code`)."""

    ran: int
    exit_code: int
    failed: ScriptLine | None = None
    message: str = ""
    remaining: int = 0


class ScriptFace(Protocol):
    """What a face does around each command of a script (echo it, type it, show what came of it)."""

    async def before(self, item: ScriptLine, *, shown: str, name: str) -> bool:
        """Called before running (``name``: the command's canonical name, '' if unknown).

        False skips the line (e.g. ``/sleep`` when skipping to the end)."""
        ...

    async def after(self, item: ScriptLine, outcome: Outcome) -> None: ...


class ScriptRunner(Protocol):
    """What the engine needs of a session."""

    @property
    def registry(self) -> Registry: ...

    def expand(self, line: str, *, strict: bool = True) -> str: ...

    async def run(self, line: str) -> Outcome: ...


async def play_script(
    session: ScriptRunner,
    items: Sequence[ScriptLine],
    *,
    face: ScriptFace,
    keep_going: bool = False,
    execute: Callable[[str], Awaitable[Outcome]] | None = None,
) -> ScriptReport:
    """Run ``items`` one by one; the one place scripts are judged, for every face.

    A failure directly followed by ``/expect`` is judged by it (an expectation that holds makes
    the failure part of the demo). Without ``keep_going`` the first counted failure stops the
    script. ``execute`` runs a line (default ``session.run``; the TUI passes its own, which also
    shows the outcome). ``/quit`` ends the script early with what it has so far.
    """
    run = execute or session.run
    codes: list[int] = []
    pending: list[tuple[ScriptLine, Outcome]] = []
    first: tuple[ScriptLine, Outcome] | None = None
    ran = remaining = 0
    for index, item in enumerate(items):
        name = _name(session.registry, item.line)
        if not await face.before(item, shown=session.expand(item.line, strict=False), name=name):
            continue
        outcome = await run(item.line)
        ran += 1
        await face.after(item, outcome)
        if outcome.ok:
            if outcome.name == "expect":
                pending.clear()  # the failure before it was expected
            if isinstance(outcome.result, Quit):
                break
            continue
        pending.append((item, outcome))
        following = items[index + 1].line if index + 1 < len(items) else ""
        if outcome.name != "expect" and _name(session.registry, following) == "expect":
            continue  # the next line judges it
        first = first or pending[-1]
        codes += [o.exit_code for _, o in pending]
        pending.clear()
        if not keep_going:
            remaining = len(items) - index - 1
            break
    if pending:
        first = first or pending[-1]
        codes += [o.exit_code for _, o in pending]
    return _report(ran, codes, first, remaining)


def _name(registry: Registry, line: str) -> str:
    """The canonical name of a line's command ('' when blank or unknown)."""
    word = command_word(line)
    cmd = registry.get(word) if word else None
    return cmd.name if cmd is not None else ""


def _report(ran: int, codes: list[int], first: tuple[ScriptLine, Outcome] | None, remaining: int) -> ScriptReport:
    if first is None:
        return ScriptReport(ran=ran, exit_code=worst_exit_code(codes))
    item, outcome = first
    text = outcome.failure.text if outcome.failure else ""
    return ScriptReport(
        ran=ran,
        exit_code=worst_exit_code(codes),
        failed=item,
        message=f"{item.label}: {item.line}: {text}",
        remaining=remaining,
    )


def script_lines(pairs: Iterable[tuple[int | str, str]]) -> list[ScriptLine]:
    """``(where, line)`` pairs (as :func:`parse_script` gives) as script lines."""
    return [ScriptLine(where=where, line=line) for where, line in pairs]
