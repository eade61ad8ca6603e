"""petstore's command line as argparse declares it: the options every face takes, each face's own, and the
parsing of a command line (only the root's options when there is no command word, as ``petstore`` alone).

argparse only: the service's options and the bot's platforms (from the bots' registry, :mod:`petstore_cli.bot_options`)
are added where their parsers are built, so ``petstore --version`` and ``petstore run`` import neither, and
``petstore --help`` no heavy library. The dispatcher (:mod:`petstore_cli.dispatch`) takes what this parses.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Protocol

from petstore_api import __version__
from petstore_os.arguments import OneLineParser, port_number

__all__ = [
    "FACES",
    "FORMATS",
    "build_parser",
    "command_index",
    "global_options",
    "hoist_output_options",
    "output_options",
    "parse",
]

#: The faces and tools: subcommands of their own. Every other command word is a registry command
#: (``petstore list sold``), run as ``petstore run -c '/list sold'`` (see petstore_cli.subcommands).
FACES = ("tui", "chat", "run", "serve", "web", "bot", "completion", "config", "auth", "approvals")
#: Output formats of ``run`` and the registry subcommands (renderers: bot_commands.formats, render_text).
FORMATS = ("table", "plain", "tsv", "csv", "json", "jsonl")

DESCRIPTION = """\
Work with a Pet Store API server: a TUI (default), a chat-like prompt, a script
runner, and the service itself. With nothing configured every face runs on the
embedded sandbox service, so there is real data at once."""

EPILOG = """\
Every slash command is a subcommand too, with the same arguments:
  petstore list sold --limit 5     petstore add Rex --category 3     petstore get 7
  petstore orders                  petstore env                      petstore help
(petstore help lists them all; petstore COMMAND --help explains one.)
A write on an environment in [bot] approvals waits for a second person's !approve
in the bots' approvals room (--wait SECONDS, --no-wait); petstore approvals lists them.

settings, highest first: flags > environment (PETSTORE_ENV, PETSTORE_BASE_URL,
PETSTORE_API_KEY, PETSTORE_CONFIG, PETSTORE_HTTP__TIMEOUT, ...) > config file
(--config, $PETSTORE_CONFIG, or the platform config dir) > defaults.
`petstore config show` prints every setting and where it came from;
`petstore config init` writes a commented config file."""


def global_options(*, suppress: bool) -> OneLineParser:
    """Options accepted both before and after the subcommand."""
    default = argparse.SUPPRESS if suppress else None
    p = OneLineParser(add_help=False)
    g = p.add_argument_group("connection")
    g.add_argument(
        "--env",
        choices=["sandbox", "staging", "production", "custom"],
        default=default,
        help="environment to work with (default: custom when a base URL is set, else sandbox)",
    )
    g.add_argument(
        "--base-url", metavar="URL", default=default, help="base address of a conforming server, ending in /v1"
    )
    g.add_argument("--config", metavar="FILE", default=default, help="TOML config file")
    g.add_argument("--read-only", action="store_true", default=default, help="refuse every write (/add)")
    g.add_argument(
        "--audit-log",
        metavar="FILE",
        default=default,
        help="append every write attempt to FILE as JSON lines (also [audit] path)",
    )
    g.add_argument(
        "--sandbox-reset",
        action="store_true",
        default=default,
        help="start the sandbox from its initial data (for demos that replay the same way)",
    )
    g.add_argument(
        "-v", "--verbose", action="count", default=default, help="log requests to stderr (Authorization is redacted)"
    )
    return p


def build_parser(*, commands: bool = True, only: str | None = None) -> argparse.ArgumentParser:
    """The ``petstore`` parser; ``commands=False``: the root's own options only (see :func:`parse`); ``only``: with
    that command's parser alone (a command line that names it needs no other: ``petstore run -c /list`` builds
    neither the service's options nor the web face's)."""
    parser = OneLineParser(
        prog="petstore",
        description=DESCRIPTION,
        epilog=EPILOG,
        parents=[global_options(suppress=False)],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        exit_on_error=commands,
    )
    parser.add_argument("--version", action="version", version=f"petstore {__version__}")
    _theme_option(parser, suppress=False)
    if not commands:
        parser.set_defaults(command=None)
        return parser
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = [global_options(suppress=True)]
    for name, add in _COMMANDS.items():
        if only is None or name == only:
            add(sub.add_parser, common, alone=only is not None)
    return parser


#: A subparsers action's ``add_parser``: what each face's builder below adds its parser with.
AddParser = Callable[..., argparse.ArgumentParser]


class Builder(Protocol):
    """A face's builder: adds its parser with ``add_parser``, the options every face takes from ``common``.
    ``alone``: the command line names that face, its parser is the only one built (``petstore --help`` and the
    completion build them all): the bot describes its platforms then, from their settings."""

    def __call__(self, add_parser: AddParser, common: Sequence[argparse.ArgumentParser], *, alone: bool) -> None: ...


def _tui(add_parser: AddParser, common: Sequence[argparse.ArgumentParser], *, alone: bool) -> None:
    tui = add_parser(
        "tui",
        parents=common,
        help="the Textual TUI (the default command)",
        description="Open the TUI: pets list, status tabs, add form, detail view, chat prompt.",
    )
    _add_tui_options(tui)


def _chat(add_parser: AddParser, common: Sequence[argparse.ArgumentParser], *, alone: bool) -> None:
    add_parser(
        "chat",
        parents=common,
        help="a chat-like prompt in the terminal",
        description="A prompt for slash commands (/help lists them). Reads stdin when piped.",
    )


def _run(add_parser: AddParser, common: Sequence[argparse.ArgumentParser], *, alone: bool) -> None:
    run = add_parser(
        "run",
        parents=[*common, output_options()],
        help="run slash commands from a script, stdin or -c",
        description="Run commands one a line; exit 0 ok, 1 failed at the service, 2 bad input.",
    )
    _add_run_options(run)


def _bot(add_parser: AddParser, common: Sequence[argparse.ArgumentParser], *, alone: bool) -> None:
    from .bot_options import add_bot_parser  # a subcommand for each platform of the bots' registry

    add_bot_parser(add_parser, common, described=alone)


def _serve(add_parser: AddParser, common: Sequence[argparse.ArgumentParser], *, alone: bool) -> None:
    serve = add_parser(
        "serve",
        help="run the Pet Store service (SQLite) with uvicorn",
        description="Serve the Pet Store API under /v1 on HTTP.",
    )
    from petstore_server.options import add_serve_options

    add_serve_options(serve)


def _web(add_parser: AddParser, common: Sequence[argparse.ArgumentParser], *, alone: bool) -> None:
    web = add_parser(
        "web",
        parents=common,
        help="serve the TUI to browsers (a login, loopback by default)",
        description="Serve the TUI to web browsers: each browser session runs `petstore tui` "
        "with these settings, as the person who logged in (web:NAME), audited. A generated token is "
        "printed once, in the address to open (after '#': never sent to a server).",
    )
    _add_web_options(web)
    _theme_option(web, suppress=True)


def _completion(add_parser: AddParser, common: Sequence[argparse.ArgumentParser], *, alone: bool) -> None:
    completion = add_parser(
        "completion",
        help="print the shell completion script (bash, zsh, fish)",
        description="Print a completion script (the README has the install lines).",
    )
    completion.add_argument("shell", choices=["bash", "zsh", "fish"])


def _config(add_parser: AddParser, common: Sequence[argparse.ArgumentParser], *, alone: bool) -> None:
    config = add_parser(
        "config",
        parents=common,
        help="where the config file is, what is in effect, a new one",
        description="path: the file that would be read; show: every effective setting and its "
        "source; init: write a commented config file (mode 0600, never overwrites).",
    )
    config.add_argument("action", choices=["path", "show", "init"])


def _auth(add_parser: AddParser, common: Sequence[argparse.ArgumentParser], *, alone: bool) -> None:
    auth = add_parser(
        "auth",
        parents=common,
        help="store the API key of a server (system keyring, else a 0600 file)",
        description="login: store the key of the server in effect (read from a masked prompt, or stdin when piped) "
        "and checks it against the server (one request; a refused key is not stored); status: where the key in "
        "effect is kept (never the key) and whether the server accepts it; logout: remove it. A key from "
        "PETSTORE_API_KEY, api_key_file or the config file wins over a stored one; no flag takes a key (a command "
        "line is seen by every user of the host).",
    )
    auth.add_argument("action", choices=["login", "status", "logout"])


def _approvals(add_parser: AddParser, common: Sequence[argparse.ArgumentParser], *, alone: bool) -> None:
    approvals = add_parser(
        "approvals",
        parents=[*common, output_options(writes=False)],
        help="requests for a second person's approval (writes under [bot] approvals)",
        description="list: the requests in the bots' shared state ([bot] state), newest first (id, asker, what, "
        "state, age); show ID: one request whole (every field, who decided, why, what came of it); cancel ID: "
        "withdraw a request of one's own that still waits.",
    )
    approvals.add_argument("action", nargs="?", choices=["list", "show", "cancel"], default="list")
    approvals.add_argument("id", nargs="?", metavar="ID", help="the request's id (its code), for show and cancel")
    approvals.add_argument(
        "--limit", type=_positive, default=50, metavar="N", help="list at most N requests (default: 50)"
    )


#: Each face's parser, in the order ``petstore --help`` lists them (the keys are :data:`FACES`).
_COMMANDS: dict[str, Builder] = {
    "tui": _tui,
    "chat": _chat,
    "run": _run,
    "bot": _bot,
    "serve": _serve,
    "web": _web,
    "completion": _completion,
    "config": _config,
    "auth": _auth,
    "approvals": _approvals,
}


def output_options(*, writes: bool = True) -> OneLineParser:
    """How ``run`` and the registry subcommands print (a parent parser); ``writes``: and how their writes are
    consented to (``--yes``) or approved (``--wait``, ``--no-wait``)."""
    p = OneLineParser(add_help=False)
    g = p.add_argument_group("output")
    g.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="table (default; plain text off a terminal), plain, tsv, csv, json (an array of the records), "
        "jsonl (one object a command)",
    )
    g.add_argument("--json", action="store_true", help="one JSON object per command on stdout (--format jsonl)")
    g.add_argument("--fields", metavar="F1,F2", help="only these fields of each record, in this order (id,name)")
    g.add_argument("--jq", metavar="EXPR", help="filter the records (--format json) through a jq expression")
    g.add_argument("--template", metavar="TEXT", help="print each record through a template: '{{.id}} {{.name}}'")
    if not writes:
        return p
    g.add_argument("--yes", action="store_true", help="confirm writes on the production environment")
    a = p.add_argument_group("approval (an environment in [bot] approvals: a second person approves each write)")
    a.add_argument(
        "--wait",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="wait at most SECONDS for the approval (default: until the request expires, [bot] approval_ttl)",
    )
    a.add_argument("--no-wait", action="store_true", help="print the request's id and exit 0 without waiting")
    return p


def _add_tui_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--play", metavar="SCRIPT", help="play a script of slash commands inside the TUI")
    p.add_argument("--delay", type=float, default=None, metavar="SECONDS", help="typing delay when playing")
    p.add_argument("--exit", action="store_true", help="exit when the played script ends")
    _theme_option(p, suppress=True)
    # Set by `petstore web` for each browser session, from the token the person logged in with (the browser has no
    # say): who acts, with which role, in a session that touches none of this host's files. Not for people.
    p.add_argument("--web-actor", metavar="NAME", default=None, help=argparse.SUPPRESS)
    p.add_argument("--web-role", choices=("none", "viewer", "operator"), default="operator", help=argparse.SUPPRESS)


def _theme_option(p: argparse.ArgumentParser, *, suppress: bool) -> None:
    """``--theme``: on ``petstore`` (the TUI is its default) and ``petstore tui``."""
    p.add_argument(
        "--theme",
        metavar="NAME",
        default=argparse.SUPPRESS if suppress else None,
        help="the TUI's theme: a Textual built-in one, e.g. textual-light, nord, gruvbox "
        "(also [tui] theme); default: the one last chosen in the TUI",
    )


def _add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("script", nargs="?", metavar="SCRIPT|-", help="script file, or - for stdin")
    p.add_argument(
        "-c",
        dest="commands",
        action="append",
        default=[],
        metavar="COMMAND",
        help="a command to run (repeatable; runs after the script)",
    )
    p.add_argument("--keep-going", action="store_true", help="do not stop at the first failing command")
    p.add_argument("--echo", action="store_true", help="print each command before its result")
    p.add_argument(
        "--delay",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="with --echo, type each command out at this delay per character",
    )


def _add_web_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=port_number, default=8000, help="port (default: 8000; 0 picks a free one)")
    p.add_argument("--play", metavar="SCRIPT", help="play this script of slash commands in every new session")
    p.add_argument("--delay", type=float, default=None, metavar="SECONDS", help="typing delay when playing")
    who = p.add_mutually_exclusive_group()
    who.add_argument(
        "--token-file",
        metavar="FILE",
        help="read the owner's access token from FILE (its first line) instead of generating one",
    )
    who.add_argument(
        "--tokens",
        metavar="FILE",
        help="the people who may log in, one a line: NAME ROLE TOKEN (role none, viewer or operator); "
        "each browser session is the actor web:NAME",
    )
    p.add_argument(
        "--forwarded-allow-ips",
        metavar="IPS",
        default="",
        help="proxies (comma-separated addresses or networks, * for any) whose X-Forwarded-Proto and "
        "X-Forwarded-Host are believed; default: none",
    )
    p.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow an address beyond loopback (the traffic is not encrypted: put a TLS proxy in front)",
    )
    p.add_argument(
        "--max-sessions", type=_positive, default=4, metavar="N", help="TUI processes at most at once (default: 4)"
    )


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 100:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to 100, not {text!r}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 7 * 86_400:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds (at most 604800), not {text!r}")
    return value


#: Words that ask for the whole parser's help.
HELP = frozenset({"-h", "--help"})


def command_index(argv: Sequence[str]) -> int | None:
    """Where the command word is in ``argv`` (skipping global options and their values), if any."""
    takes_value = {
        option
        for parent in (global_options(suppress=True), output_options())
        for action in parent._actions
        if action.nargs != 0
        for option in action.option_strings
    } | {"--theme"}  # the root's own option (the TUI is its default face)
    index = 0
    while index < len(argv):
        word = argv[index]
        if word == "--":
            return index + 1 if index + 1 < len(argv) else None
        if not word.startswith("-") or word == "-":
            return index
        index += 2 if word in takes_value else 1
    return None


def hoist_output_options(words: list[str], index: int) -> tuple[list[str], int]:
    """``petstore --format csv list sold`` as ``petstore list sold --format csv``: the output options (``--format``,
    ``--json``, ``--yes`` ...) of ``run`` and the registry commands, typed before the command word, moved after
    it; the words and the command word's new index."""
    if words[index] in FACES and words[index] != "run":
        return words, index
    takes_value = {
        option: action.nargs != 0 for action in output_options()._actions for option in action.option_strings
    }
    before: list[str] = []
    moved: list[str] = []
    position = 0
    while position < index:
        word = words[position]
        name = word.split("=", 1)[0]
        target = moved if name in takes_value else before
        target.append(word)
        if takes_value.get(name) and "=" not in word and position + 1 < index:
            target.append(words[position + 1])
            position += 1
        position += 1
    return [*before, words[index], *moved, *words[index + 1 :]], len(before)


def parse(words: Sequence[str]) -> argparse.Namespace:
    """``words`` parsed. Without a command word (``petstore``, the TUI, the most common start) the root's own
    options are all there is to parse, so the parser of every command is built only for help, or for a usage
    error to say what is allowed."""
    if command_index(words) is None and not HELP.intersection(words):
        try:
            args, rest = build_parser(commands=False).parse_known_args(words)
        except argparse.ArgumentError:
            rest = list(words)
        if not rest:
            return args
    index = command_index(words)
    named = words[index] if index is not None and words[index] in FACES else None
    return build_parser(only=None if HELP.intersection(words[:index]) else named).parse_args(words)
