"""Every registry command as a subcommand: ``petstore list sold`` is ``petstore run -c "/list sold"``.

Nothing here lists commands: the words after the command are split into petstore's own
options (``--env``, ``--format``, ``--yes`` ... as argparse declares them) and the command's
words, which are joined back into one line (:func:`bot_commands.parser.join_command`) and run
by ``petstore run``: the registry parses it, so usage errors, policy, audit and exit codes are
those of ``run -c``. ``--`` passes everything after it to the command. A word that is neither a
face nor a command gets "did you mean".
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence

from bot_commands.commands import default_registry
from bot_commands.parser import join_command
from bot_commands.registry import Command, Registry
from bot_commands.validation import suggest
from petstore_os.arguments import OneLineParser

from .exits import EXIT_USAGE
from .options import FACES, global_options, output_options

__all__ = ["command_parser", "petstore_options", "split_words", "subcommand_args"]

_VERBOSE = re.compile(r"^-v+$")


def petstore_options() -> dict[str, bool]:
    """petstore's own options a subcommand accepts: option string -> whether it takes a value."""
    options: dict[str, bool] = {"-h": False, "--help": False}
    for parent in (global_options(suppress=True), output_options()):
        for action in parent._actions:
            options.update(dict.fromkeys(action.option_strings, action.nargs != 0))
    return options


def split_words(words: Sequence[str]) -> tuple[list[str], list[str]]:
    """``(petstore options, the command's words)``; ``--`` hands the rest to the command."""
    known = petstore_options()
    ours: list[str] = []
    theirs: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        name = word.split("=", 1)[0]
        if word == "--":
            theirs += words[index:]
            break
        if name in known or _VERBOSE.match(word):
            ours.append(word)
            if known.get(name) and "=" not in word and index + 1 < len(words):
                ours.append(words[index + 1])
                index += 1
        else:
            theirs.append(word)
        index += 1
    return ours, theirs


def command_parser(cmd: Command) -> argparse.ArgumentParser:
    """``petstore NAME --help``: the command's usage and arguments (from its declaration) and petstore's options."""
    usage = cmd.usage.replace(f"/{cmd.name}", f"petstore {cmd.name}", 1) + " [petstore options]"
    aliases = f" (also: {', '.join('petstore ' + a for a in cmd.aliases)})" if cmd.aliases else ""
    parser = OneLineParser(
        prog=f"petstore {cmd.name}",
        usage=usage,
        description=cmd.summary + aliases,
        epilog=cmd.details or None,
        parents=[global_options(suppress=True), output_options()],
        add_help=True,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    group = parser.add_argument_group(f"arguments of /{cmd.name} (as in run -c and chat)")
    for number, arg in enumerate(cmd.args):
        choices = arg.choices if isinstance(arg.choices, tuple) and arg.choices else None
        shown = f"{arg.help} ({', '.join(choices)})" if choices and arg.help and "one of" not in arg.help else arg.help
        if arg.flag and arg.switch:
            group.add_argument(arg.flag, action="store_true", help=shown or None)
        elif arg.flag:
            group.add_argument(arg.flag, metavar=arg.metavar, help=shown or None)
        else:
            group.add_argument(
                f"{arg.dest}_{number}",
                metavar=arg.metavar or arg.dest,
                nargs="?",
                help=shown or None,
            )
    return parser


def _unknown(word: str, registry: Registry) -> int:
    hint = suggest(word.lower(), [*FACES, *registry.names()])
    maybe = f" (did you mean {hint}?)" if hint else ""
    print(
        f"petstore: unknown command '{word}'{maybe}; petstore --help lists the faces, petstore help the commands",
        file=sys.stderr,
    )
    return EXIT_USAGE


def subcommand_args(argv: Sequence[str], index: int, parser: argparse.ArgumentParser) -> argparse.Namespace | int:
    """The arguments of ``petstore run`` for the registry command at ``argv[index]``, or an exit code."""
    registry = default_registry()
    word = argv[index]
    cmd = registry.get(word)
    if cmd is None or word.lower() in FACES:
        return _unknown(word, registry)
    for missing in cmd.needs:  # no face of this command line gives it what it needs (a chat bot's room)
        print(f"petstore: {missing.missing(cmd.name)}", file=sys.stderr)
        return EXIT_USAGE
    if not cmd.one_shot:
        print(
            f"petstore: /{cmd.name} works within a session, not as a subcommand: in petstore chat, the TUI, "
            f"or a script (petstore run -c '/list' -c '/{cmd.name}')",
            file=sys.stderr,
        )
        return EXIT_USAGE
    ours, theirs = split_words(argv[index + 1 :])
    if "-h" in ours or "--help" in ours:
        command_parser(cmd).print_help()
        return 0
    command_parser(cmd).parse_args(ours)  # a bad option: one line naming the command typed (petstore list), exit 2
    args = parser.parse_args([*argv[:index], "run", *ours])
    args.lines = [(f"petstore {cmd.name}", join_command(word, *theirs))]  # as typed, like run -c
    return args
