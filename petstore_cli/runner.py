"""``petstore run``: run slash commands from a script, stdin or ``-c``.

The script engine (:func:`bot_commands.script.play_script`) judges the lines
and gives the exit code: 0 every command succeeded; 1 a command failed at the
service, the service could not be reached, or an ``/expect`` did not hold; 2 a
command could not be parsed or validated (or was refused before sending). This
module only shows what came of each line, in the ``--format`` asked for: ``table`` (Rich on a
terminal; plain text, never wrapped or clipped, in a pipe), ``plain``, or the machine formats of
:mod:`bot_commands.formats` (``tsv``, ``csv``, ``json``: records on stdout, prose on stderr) and
``jsonl`` (``--json``: one object a command). On a terminal a command still running after a
moment shows a spinner on stderr. Rich (its console, tables) is imported only when something goes
through it: a table on a terminal, an echo, a note or an error; piped plain output writes text.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable, Collection, Iterable
from functools import cached_property
from typing import IO, TYPE_CHECKING

from bot_commands.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE
from bot_commands.formats import OutputError, data_view, record
from bot_commands.outcome import Outcome
from bot_commands.output import MachineWriter, OutputSpec, records_of
from bot_commands.render_text import to_plain
from bot_commands.sanitize import visible
from bot_commands.script import ScriptLine, parse_script, play_script, read_script, script_lines
from bot_commands.session import CommandSession
from bot_commands.views import BlankView, notes_of, present
from petstore_cli.settings.model import Settings
from petstore_os import records as rec
from petstore_os.records import field

from .approvals import WaitOptions, terminal_approval
from .compose import compose

if TYPE_CHECKING:  # pragma: no cover - imported only when needed
    from rich.console import Console
    from rich.text import Text

    from .progress import Spinner

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "RunOptions", "collect_lines", "run_main", "run_script"]

Where = int | str
Sleep = Callable[[float], Awaitable[object]]


#: ``json.dumps(obj, ensure_ascii=True, default=str)`` made once (a ``--json`` line per command).
_JSONL = json.JSONEncoder(ensure_ascii=True, default=str)

#: Environment variables with which Rich may treat a pipe as a terminal (then Rich decides).
RICH_TERMINAL_VARS = ("FORCE_COLOR", "TTY_INTERACTIVE", "TTY_COMPATIBLE")


def may_be_terminal(file: IO[str]) -> bool:
    """False when Rich would certainly not treat ``file`` as a terminal (a pipe, a file)."""
    if any(name in os.environ for name in RICH_TERMINAL_VARS):
        return True
    try:
        return file.isatty()
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


def styled(text: str, style: str) -> Text:
    from rich.text import Text

    return Text(text, style=style)


class RunFace:
    """Prints each line's outcome in the chosen format; the engine decides what counts."""

    def __init__(
        self,
        *,
        out: IO[str],
        err: IO[str],
        output: OutputSpec,
        echo: bool,
        delay: float,
        sleep: Sleep,
        one_shot: bool = False,
        spinner: Spinner | None = None,
        prefix: str = "/",
        commands: Collection[str] = (),
    ) -> None:
        self.out_file, self.err_file = out, err
        fmt = output.fmt
        if fmt == "table" and not (may_be_terminal(out) and self.out.is_terminal):
            fmt = "plain"  # off a terminal: no colour, no wrapping, every cell whole
        self.fmt, self.echo, self.delay, self.sleep = fmt, echo, delay, sleep
        self.fields = output.fields
        self.writer = MachineWriter(output, out=self._write, note=self._note) if fmt in ("tsv", "csv", "json") else None
        self.one_shot = one_shot
        self.spinner = spinner
        self.prefix, self.commands = prefix, commands  # how a failure names commands (petstore list ...)
        self.bad_output = False  # a --fields the command has not, a --jq that failed: exit 2

    @cached_property
    def out(self) -> Console:
        from .consoles import PipeConsole

        return PipeConsole(file=self.out_file, highlight=False, soft_wrap=False)

    @cached_property
    def err(self) -> Console:
        from rich.console import Console

        return Console(file=self.err_file, highlight=False, stderr=True, soft_wrap=True)

    @property
    def machine(self) -> bool:
        """Records on stdout, every word of prose on stderr."""
        return self.fmt in ("tsv", "csv", "json", "jsonl")

    async def before(self, item: ScriptLine, *, shown: str, name: str) -> bool:
        if self.echo:
            await self._echo(shown)
        if self.spinner is not None:
            self.spinner.start(shown)
        return True

    async def after(self, item: ScriptLine, outcome: Outcome) -> None:
        if self.spinner is not None:
            self.spinner.stop()
        try:
            if self.fmt == "jsonl":
                self._record(record(outcome, label=item.label, fields=self.fields), outcome, item)
            elif outcome.failure is not None:
                self.err.print(self._failure_line(item, outcome))
            elif self.writer is not None:
                self.writer.result(outcome)
            else:
                self._show(outcome)
        except OutputError as exc:
            self._output_error(exc)

    def _output_error(self, exc: OutputError) -> None:
        self.bad_output = True
        self.err.print(styled(f"petstore: {visible(str(exc))}", "bold red"))

    async def _echo(self, line: str) -> None:
        target = self.err if self.machine else self.out
        if not (self.delay > 0 and target.is_terminal):
            from bot_commands.render import echo as echo_text

            target.print(echo_text(line))
            return
        target.print(styled("› ", "dim"), end="")
        for char in visible(line):
            target.print(styled(char, "bold"), end="")
            await self.sleep(self.delay)
        target.print()

    def _notes(self, notes: tuple[str, ...]) -> None:
        for note in notes:
            self._note(note)

    def _note(self, text: str) -> None:
        self.err.print(styled(visible(text), "yellow"))

    def _show(self, outcome: Outcome) -> None:
        assert outcome.result is not None
        shown = present(outcome.result, one_shot=self.one_shot)
        self._notes(shown.notes)
        view = shown.view
        if self.fields:
            data = records_of(outcome.result, self.fields)
            view = data_view(data) if data is not None else view
        if isinstance(view, BlankView):
            return
        if self.fmt == "table":
            from bot_commands.render import to_rich

            self.out.print(to_rich(view))
        else:
            self._write(to_plain(view, whole=True) + "\n")

    def _failure_line(self, item: ScriptLine, outcome: Outcome) -> Text:
        assert outcome.failure is not None
        from bot_commands.render import render_failure

        line = render_failure(outcome.failure)
        if self.prefix != "/":
            from bot_commands.views import with_prefix

            line.plain = with_prefix(line.plain, prefix=self.prefix, commands=self.commands)
        return styled(f"{item.label}: ", "bold red") + line

    def _record(self, obj: dict[str, object], outcome: Outcome, item: ScriptLine) -> None:
        if outcome.failure is not None and outcome.failure.kind == "expectation_failed":
            self.err.print(self._failure_line(item, outcome))
        if outcome.result is not None:
            self._notes(notes_of(outcome.result))  # the record is the data: no view to build
        self._write(_JSONL.encode(obj) + "\n")

    def finish(self, remaining: int) -> None:
        if self.writer is not None:
            try:
                self.writer.finish()
            except OutputError as exc:
                self._output_error(exc)
        if remaining > 0:
            s = "" if remaining == 1 else "s"
            self.err.print(styled(f"stopped: {remaining} command{s} not run (--keep-going runs them)", "dim"))

    def _write(self, text: str) -> None:
        self.out_file.write(text)
        self.out_file.flush()


async def run_script(
    session: CommandSession,
    lines: Iterable[tuple[Where, str]],
    *,
    out: IO[str],
    err: IO[str],
    json_mode: bool = False,
    fmt: str = "table",
    keep_going: bool = False,
    echo: bool = False,
    delay: float = 0.0,
    sleep: Sleep | None = None,
    one_shot: bool = False,
    spinner: Spinner | None = None,
    prefix: str = "/",
    output: OutputSpec | None = None,
) -> int:
    """Run ``(line number, command)`` pairs; returns the exit code (0, 1 or 2).

    ``output`` (``--fields``, ``--jq``, ``--template`` too) wins over ``fmt``; ``json_mode`` is ``fmt="jsonl"``
    (``--json``). A ``--fields`` a command has not, or a ``--jq`` that fails on the data, is exit 2. ``delay``
    (seconds per character) types echoed commands out, on a terminal only; ``sleep`` defaults to the session's
    (which /sleep uses too). ``one_shot``: nothing suggests a follow-up command (``/more``). ``prefix``:
    how failures name commands (``petstore `` for the subcommands: ``Usage: petstore get ID``).
    """
    face = RunFace(
        out=out,
        err=err,
        output=output or OutputSpec(fmt="jsonl" if json_mode else fmt),
        echo=echo,
        delay=max(delay, 0.0),
        sleep=sleep or session.sleep,
        one_shot=one_shot,
        spinner=spinner,
        prefix=prefix,
        commands=frozenset(session.registry.names()) if prefix != "/" else (),
    )
    report = await play_script(session, script_lines(lines), face=face, keep_going=keep_going)
    face.finish(report.remaining)
    return EXIT_USAGE if face.bad_output else report.exit_code


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


@rec.record
class RunOptions:
    """What ``petstore run`` (and a subcommand, which is one ``run -c``) was asked for."""

    script: str | None = None
    commands: tuple[str, ...] = ()
    lines: tuple[tuple[Where, str], ...] = ()
    output: OutputSpec = field(default_factory=OutputSpec)
    keep_going: bool = False
    echo: bool = False
    delay: float = 0.0
    yes: bool = False
    sandbox_reset: bool = False
    prefix: str = "/"
    typed: str = "petstore run"  # the command as typed (petstore add): what a refusal tells to add --yes to
    approval: WaitOptions = field(default_factory=WaitOptions)  # --wait, --no-wait ([bot] approvals)


def run_main(settings: Settings, options: RunOptions) -> int:
    """Entry point of ``petstore run`` and the subcommands (called by petstore_cli.dispatch).

    ``options.lines`` are ready ``(where, line)`` pairs (a subcommand's line), run after the script
    and the ``-c`` commands.
    """
    script = options.script
    try:
        items = [*collect_lines(script, options.commands), *options.lines]
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        print(f"petstore run: cannot read {visible(script or '')}: {reason}", file=sys.stderr)
        return EXIT_USAGE
    if not script and not options.commands and not options.lines:
        print("petstore run: nothing to run; give a SCRIPT, - for stdin, or -c COMMAND", file=sys.stderr)
        return EXIT_USAGE
    composition = compose(settings, sandbox_reset=options.sandbox_reset)
    if composition.target.sandbox and sys.stderr.isatty():
        print("petstore: on the in-process sandbox (set --base-url or --env to use a server)", file=sys.stderr)
    spinner = None
    if sys.stderr.isatty():
        from .progress import Spinner

        spinner = Spinner(sys.stderr)
    try:
        approval = terminal_approval(composition, settings, options=options.approval, spinner=spinner)
    except BaseException:
        asyncio.run(composition.aclose())
        raise
    session = composition.session(
        confirm=_always_yes if options.yes else None,
        consent_hint=f"{options.typed} needs --yes",
        ask_approval=approval,
        progress=spinner.update if spinner is not None else None,
    )

    async def main() -> int:
        try:
            return await run_script(
                session,
                items,
                out=sys.stdout,
                err=sys.stderr,
                output=options.output,
                keep_going=options.keep_going,
                echo=options.echo,
                delay=options.delay,
                one_shot=not script,
                spinner=spinner,
                prefix=options.prefix,
            )
        finally:
            if spinner is not None:
                spinner.stop()
            await composition.aclose()

    return asyncio.run(main())
