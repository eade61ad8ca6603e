"""``petstore run``: run slash commands from a script, stdin or ``-c``.

Exit codes: 0 every command succeeded; 1 a command failed at the service, the
service could not be reached, or an ``/expect`` did not hold; 2 a command could
not be parsed or validated (or was refused before sending: --read-only,
production without --yes). With ``--keep-going`` the exit code is 2 if any
such input error occurred, else 1 if anything failed.

A failing command directly followed by ``/expect`` lines is judged by them:
when they hold (``/expect error 404``), the failure was expected and does not
count.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Iterable
from typing import IO, Any

from rich.console import Console
from rich.text import Text

from bot_commands.errors import ErrorInfo, ExpectationFailed, error_info
from bot_commands.render import echo as echo_text
from bot_commands.render import error_message, notices, render
from bot_commands.results import Quit, Result
from bot_commands.sanitize import visible
from bot_commands.script import is_expect, parse_script, read_script
from bot_commands.session import CommandSession

__all__ = ["run_script", "run_main", "collect_lines", "EXIT_OK", "EXIT_FAILED", "EXIT_USAGE"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
Where = int | str
Sleep = Callable[[float], Awaitable[Any]]


def _where(where: Where) -> str:
    return f"line {where}" if isinstance(where, int) else str(where)


class _ScriptRun:
    """One run of a script: prints results, tracks failures, decides when to stop."""

    def __init__(self, session: CommandSession, *, out: IO[str], err: IO[str], json_mode: bool,
                 keep_going: bool, echo: bool, delay: float, sleep: Sleep) -> None:
        self.session = session
        self.out_file = out
        self.out = Console(file=out, highlight=False, soft_wrap=False)
        self.err = Console(file=err, highlight=False, stderr=True, soft_wrap=True)
        self.json_mode, self.keep_going, self.echo, self.delay, self.sleep = json_mode, keep_going, echo, delay, sleep
        self.failures: list[int] = []
        self.pending: list[int] = []

    async def run(self, items: list[tuple[Where, str]]) -> int:
        for index, (where, line) in enumerate(items):
            ok, result = await self._one(where, line)
            if ok and isinstance(result, Quit):
                break
            if ok or (not is_expect(line) and self._expect_next(items, index)):
                continue  # success, or a failure the next /expect lines will judge
            if self._commit():
                self._stopped(len(items) - index - 1)
                break
        self._commit()
        return self.exit_code()

    @staticmethod
    def _expect_next(items: list[tuple[Where, str]], index: int) -> bool:
        return index + 1 < len(items) and is_expect(items[index + 1][1])

    async def _one(self, where: Where, line: str) -> tuple[bool, Result | None]:
        shown = self.session.expand(line, strict=False)
        if self.echo:
            await self._echo(shown)
        try:
            result = await self.session.execute(line)
        except Exception as exc:  # noqa: BLE001 - every failure: one line, never a traceback
            self._failed(where, shown, exc)
            return False, None
        if is_expect(line):
            self.pending.clear()  # the failure before it was expected
        self._succeeded(shown, result)
        return True, result

    def _commit(self) -> bool:
        """Count pending failures; True when the run must stop."""
        if not self.pending:
            return False
        self.failures += self.pending
        self.pending = []
        return not self.keep_going

    def exit_code(self) -> int:
        if not self.failures:
            return EXIT_OK
        return EXIT_USAGE if EXIT_USAGE in self.failures else EXIT_FAILED

    # -- output -------------------------------------------------------------

    async def _echo(self, line: str) -> None:
        target = self.err if self.json_mode else self.out
        typed = self.delay > 0 and target.is_terminal
        if not typed:
            target.print(echo_text(line))
            return
        target.print(Text("› ", style="dim"), end="")
        for char in visible(line):
            target.print(Text(char, style="bold"), end="")
            await self.sleep(self.delay)
        target.print()

    def _succeeded(self, shown: str, result: Result) -> None:
        for note in notices(result):
            self.err.print(Text(note, style="yellow"))
        if self.json_mode:
            self._json({"command": shown, "ok": True, "result": result.to_json()})
            return
        renderable = render(result)
        if renderable is not None:
            self.out.print(renderable)

    def _failed(self, where: Where, shown: str, exc: Exception) -> None:
        info = error_info(exc)
        self.pending.append(info.exit_code)
        message = f"{_where(where)}: {error_message(exc)}"
        if self.json_mode:
            if isinstance(exc, ExpectationFailed):
                info = ErrorInfo(code=info.code, message=f"{_where(where)}: {info.message}", status=0,
                                 exit_code=info.exit_code)
                self.err.print(Text(message, style="bold red"))
            self._json({"command": shown, "ok": False, "error": info.to_json()})
        else:
            self.err.print(Text(message, style="bold red"))

    def _stopped(self, remaining: int) -> None:
        if remaining <= 0:
            return
        s = "" if remaining == 1 else "s"
        self.err.print(Text(f"stopped: {remaining} command{s} not run (--keep-going runs them)", style="dim"))

    def _json(self, obj: dict[str, Any]) -> None:
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
    run = _ScriptRun(session, out=out, err=err, json_mode=json_mode, keep_going=keep_going, echo=echo,
                     delay=max(delay, 0.0), sleep=sleep or session.sleep)
    return await run.run(list(lines))


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


async def _always_yes(_prompt: str) -> bool:
    return True


def run_main(settings: Any, args: Any) -> int:
    """Entry point of ``petstore run`` (called by petstore_cli.faces)."""
    try:
        items = collect_lines(args.script, args.commands)
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        print(f"petstore run: cannot read {visible(args.script)}: {reason}", file=sys.stderr)
        return EXIT_USAGE
    if not args.script and not args.commands:
        print("petstore run: nothing to run; give a SCRIPT, - for stdin, or -c COMMAND", file=sys.stderr)
        return EXIT_USAGE
    from .compose import compose

    composition = compose(settings, sandbox_reset=bool(getattr(args, "sandbox_reset", False)),
                          confirm=_always_yes if args.yes else None)
    if composition.target.sandbox and sys.stderr.isatty():
        print("petstore: on the in-process sandbox (set --base-url or --env to use a server)", file=sys.stderr)

    async def main() -> int:
        try:
            return await run_script(composition.session, items, out=sys.stdout, err=sys.stderr,
                                    json_mode=args.json, keep_going=args.keep_going, echo=args.echo,
                                    delay=args.delay or 0.0)
        finally:
            await composition.aclose()

    return asyncio.run(main())
