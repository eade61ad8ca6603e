"""``petstore run``: run slash commands from a script, stdin or ``-c``.

The script engine (:func:`bot_commands.script.play_script`) judges the lines
and gives the exit code: 0 every command succeeded; 1 a command failed at the
service, the service could not be reached, or an ``/expect`` did not hold; 2 a
command could not be parsed or validated (or was refused before sending). This
module only shows what came of each line: Rich on a terminal, plain text (no
colour, never wrapped) in a pipe, one JSON object a line with ``--json``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Iterable
from typing import IO

from rich.console import Console
from rich.text import Text

from bot_commands.outcome import EXIT_FAILED, EXIT_OK, EXIT_USAGE, Outcome
from bot_commands.render import echo as echo_text
from bot_commands.render import render_failure, to_rich
from bot_commands.sanitize import visible
from bot_commands.script import ScriptLine, parse_script, play_script, read_script, script_lines
from bot_commands.session import CommandSession
from bot_commands.views import BlankView, present
from petstore_api.settings import Settings

from .compose import compose

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "collect_lines", "run_main", "run_script"]

Where = int | str
Sleep = Callable[[float], Awaitable[object]]


class RunFace:
    """Prints each line's outcome; the engine decides what counts."""

    def __init__(self, *, out: IO[str], err: IO[str], json_mode: bool, echo: bool, delay: float,
                 sleep: Sleep) -> None:
        self.out_file = out
        self.out = Console(file=out, highlight=False, soft_wrap=False)
        self.err = Console(file=err, highlight=False, stderr=True, soft_wrap=True)
        self.json_mode, self.echo, self.delay, self.sleep = json_mode, echo, delay, sleep

    async def before(self, item: ScriptLine, *, shown: str, name: str) -> bool:
        if self.echo:
            await self._echo(shown)
        return True

    async def after(self, item: ScriptLine, outcome: Outcome) -> None:
        if outcome.failure is not None:
            self._failed(item, outcome)
        else:
            self._succeeded(outcome)

    async def _echo(self, line: str) -> None:
        target = self.err if self.json_mode else self.out
        if not (self.delay > 0 and target.is_terminal):
            target.print(echo_text(line))
            return
        target.print(Text("› ", style="dim"), end="")
        for char in visible(line):
            target.print(Text(char, style="bold"), end="")
            await self.sleep(self.delay)
        target.print()

    def _succeeded(self, outcome: Outcome) -> None:
        assert outcome.result is not None
        shown = present(outcome.result)
        for note in shown.notes:
            self.err.print(Text(visible(note), style="yellow"))
        if self.json_mode:
            self._json({"command": outcome.line, "ok": True, "result": outcome.result.to_json()})
        elif not isinstance(shown.view, BlankView):
            self.out.print(to_rich(shown.view))  # no colour off a terminal; --format plain is issue 17

    def _failed(self, item: ScriptLine, outcome: Outcome) -> None:
        failure = outcome.failure
        assert failure is not None
        line = Text(f"{item.label}: ", style="bold red") + render_failure(failure)
        if self.json_mode:
            error = failure.to_json()
            if failure.kind == "expectation":
                error["message"] = f"{item.label}: {error['message']}"
                self.err.print(line)
            self._json({"command": outcome.line, "ok": False, "error": error})
        else:
            self.err.print(line)

    def stopped(self, remaining: int) -> None:
        if remaining > 0:
            s = "" if remaining == 1 else "s"
            self.err.print(Text(f"stopped: {remaining} command{s} not run (--keep-going runs them)", style="dim"))

    def _json(self, obj: dict[str, object]) -> None:
        self.out_file.write(json.dumps(obj, ensure_ascii=True, default=str) + "\n")
        self.out_file.flush()


async def run_script(
    session: CommandSession,
    lines: Iterable[tuple[Where, str]],
    *,
    out: IO[str],
    err: IO[str],
    json_mode: bool = False,
    keep_going: bool = False,
    echo: bool = False,
    delay: float = 0.0,
    sleep: Sleep | None = None,
) -> int:
    """Run ``(line number, command)`` pairs; returns the exit code (0, 1 or 2).

    ``delay`` (seconds per character) types echoed commands out, on a terminal
    only; ``sleep`` defaults to the session's (which /sleep uses too).
    """
    face = RunFace(out=out, err=err, json_mode=json_mode, echo=echo, delay=max(delay, 0.0),
                   sleep=sleep or session.sleep)
    report = await play_script(session, script_lines(lines), face=face, keep_going=keep_going)
    face.stopped(report.remaining)
    return report.exit_code


def collect_lines(
    script: str | None, commands: Iterable[str], *, stdin: IO[str] | None = None
) -> list[tuple[Where, str]]:
    """The script's lines (file, or ``-`` for stdin), then each ``-c`` command."""
    items: list[tuple[Where, str]] = []
    if script == "-":
        items += parse_script((stdin or sys.stdin).read())
    elif script:
        items += read_script(script)
    for index, command in enumerate(commands, start=1):
        items += [(f"-c {index}", line) for _, line in parse_script(command)]
    return items


async def _always_yes(_question: str) -> bool:
    return True


def run_main(settings: Settings, *, script: str | None, commands: list[str], json_mode: bool, keep_going: bool,
             echo: bool, delay: float, yes: bool, sandbox_reset: bool) -> int:
    """Entry point of ``petstore run`` (called by petstore_cli.faces)."""
    try:
        items = collect_lines(script, commands)
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        print(f"petstore run: cannot read {visible(script or '')}: {reason}", file=sys.stderr)
        return EXIT_USAGE
    if not script and not commands:
        print("petstore run: nothing to run; give a SCRIPT, - for stdin, or -c COMMAND", file=sys.stderr)
        return EXIT_USAGE
    composition = compose(settings, sandbox_reset=sandbox_reset)
    session = composition.session(confirm=_always_yes if yes else None)
    if composition.target.sandbox and sys.stderr.isatty():
        print("petstore: on the in-process sandbox (set --base-url or --env to use a server)", file=sys.stderr)

    async def main() -> int:
        try:
            return await run_script(session, items, out=sys.stdout, err=sys.stderr, json_mode=json_mode,
                                    keep_going=keep_going, echo=echo, delay=delay)
        finally:
            await composition.aclose()

    return asyncio.run(main())
