"""The one dispatcher: a parsed command line to the face or tool that runs it, and its exit code.

Every command goes through :func:`dispatch`: the registry's commands are rewritten to ``run`` first
(:mod:`petstore_cli.subcommands`), the refusals that need no import come next (the TUI without a terminal, a face
whose extra is missing), then the face's own module is imported, and only that one: ``petstore --version`` and the
TUI's first frame pay for nothing else. Bare ``petstore`` (the TUI, no words) is not parsed before its first
frame: argparse is imported behind it (:func:`petstore_cli.tui_start.arguments`). A bad setting or input ends here as
one ``petstore: ...`` line (exit 2).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .exits import EXIT_INTERRUPTED, EXIT_USAGE
from .startup import started

if TYPE_CHECKING:  # pragma: no cover
    import argparse

    from bot_commands.output import OutputSpec
    from petstore_cli.settings.load import LoadedSettings

__all__ = ["NO_TERMINAL", "dispatch"]

NO_TERMINAL = (
    "petstore: the TUI needs a terminal; use `petstore run` (a script, stdin or -c) or `petstore chat` without one"
)


def dispatch(words: Sequence[str], *, program: bool = False) -> int:
    """Run the command ``words`` name (the TUI when none). ``program``: this is the ``petstore`` process itself,
    not a caller in-process (only then may the TUI fork its preview child)."""
    args = _arguments(list(words)) if words else None  # bare `petstore`: parsed behind the TUI's first frame
    if isinstance(args, int):
        return args
    command = (args.command if args is not None else None) or "tui"
    refusal = _refusal(command, args)
    if refusal is not None:
        print(refusal, file=sys.stderr)
        return EXIT_USAGE
    if args is None or command == "tui":
        return _tui(args, program=program)
    if command == "serve":
        from petstore_server.serve import serve_command

        started()
        return serve_command(args)
    if command == "completion":
        from .completion import completion_main
        from .options import build_parser

        started()
        return completion_main(args.shell, parser=build_parser())
    if command == "chat":
        from .chat_start import applies, start_chat

        started()
        if applies():  # at a terminal: the prompt first, the session built behind it
            return start_chat(args)
    return _with_settings(command, args)


def _arguments(words: list[str]) -> argparse.Namespace | int:
    """The parsed command line; a registry command (``petstore list sold``) as ``run``; an int: exit at once."""
    from .options import FACES, build_parser, command_index, hoist_output_options, parse

    index = command_index(words)
    if index is not None:
        words, index = hoist_output_options(words, index)
    if index is not None and words[index] not in FACES:
        from .subcommands import subcommand_args

        return subcommand_args(words, index, build_parser(only="run"))
    return parse(words)


def _has_terminal() -> bool:
    """stdin and stdout are a terminal, or a Textual driver was chosen (headless runs, benchmarks)."""
    return (sys.stdin.isatty() and sys.stdout.isatty()) or bool(os.environ.get("TEXTUAL_DRIVER"))


def _refusal(command: str, args: argparse.Namespace | None) -> str | None:
    """The one line that refuses ``command`` before anything of it is imported, if any."""
    if command == "tui" and not _has_terminal():
        return NO_TERMINAL  # before textual loads: it would draw into a file and wait
    if command in {"serve", "web", "bot"} and args is not None:
        from .extras import missing_extra

        return missing_extra(args)
    return None


def _tui(args: argparse.Namespace | None, *, program: bool) -> int:
    """The first frame before the libraries: see petstore_cli.tui_start (``args`` None: bare ``petstore``)."""
    preview = None
    if program:  # the first page from a child process (before Textual and threads)
        from .tui_preview import fork_preview

        preview = fork_preview(args)
    from .tui_start import start_tui

    started()
    return start_tui(args, preview=preview)


def _with_settings(command: str, args: argparse.Namespace) -> int:
    """``config``, ``auth``, and the faces that load the settings before anything else: chat (piped), run, bot, web,
    approvals."""
    from bot_commands.errors import CommandError
    from petstore_api.errors import PetStoreError

    try:
        if command == "config":
            from .config import config_main

            return config_main(args)
        if command == "auth":
            from .auth import auth_main

            return auth_main(args)
        return _face(command, args)
    except (PetStoreError, CommandError) as exc:
        print(f"petstore: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _face(command: str, args: argparse.Namespace) -> int:
    from .faces import configure_logging, load

    loaded = load(args)
    for warning in loaded.warnings:
        print(f"petstore: warning: {warning}", file=sys.stderr)
    configure_logging(getattr(args, "verbose", None) or 0)
    if command not in {"run", "bot"}:  # run: once its modules are in (below); bot: once its platforms are open
        started()
    if command == "chat":
        from .chat import chat_main

        return chat_main(loaded.settings, sandbox_reset=bool(getattr(args, "sandbox_reset", False)))
    if command == "bot":
        return _bot(loaded, args)
    if command == "web":
        from .web import web_main

        return web_main(loaded, args)
    output = _output(args)
    if output is None:
        return EXIT_USAGE
    if command == "approvals":
        from .approvals_face import approvals_main

        return approvals_main(loaded.settings, args, output=output)
    return _run(loaded, args, output)


def _bot(loaded: LoadedSettings, args: argparse.Namespace) -> int:
    from .bot import bot_main

    return bot_main(loaded.settings, args, config_file=loaded.config_file)


def _output(args: argparse.Namespace) -> OutputSpec | None:
    """What ``--format``, ``--json``, ``--fields``, ``--jq`` and ``--template`` ask for; None when they cannot be
    honoured together (said in one line)."""
    from bot_commands.formats import OutputError
    from bot_commands.output import output_spec

    try:
        return output_spec(
            fmt=args.format, json_lines=args.json, fields=args.fields, jq=args.jq, template=args.template
        )
    except OutputError as exc:
        print(f"petstore: {exc}", file=sys.stderr)
        return None


def _run(loaded: LoadedSettings, args: argparse.Namespace, output: OutputSpec) -> int:
    from petstore_api.client import load_wire

    from .approvals import WaitOptions
    from .runner import RunOptions, run_main

    load_wire()  # run calls the service at once: httpx is one of its modules
    started()
    options = RunOptions(
        script=getattr(args, "script", None),
        commands=tuple(getattr(args, "commands", ())),
        lines=tuple(getattr(args, "lines", ())),
        output=output,
        keep_going=bool(getattr(args, "keep_going", False)),
        echo=bool(getattr(args, "echo", False)),
        delay=getattr(args, "delay", 0.0) or 0.0,
        yes=bool(args.yes),
        sandbox_reset=bool(getattr(args, "sandbox_reset", False)),
        prefix="petstore " if getattr(args, "lines", ()) else "/",  # a subcommand: petstore get ID
        typed=str(args.lines[0][0]) if getattr(args, "lines", ()) else "petstore run",
        approval=WaitOptions(wait=args.wait, no_wait=bool(args.no_wait)),
    )
    return run_main(loaded.settings, options)
