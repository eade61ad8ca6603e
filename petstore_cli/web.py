"""``petstore web``: the wiring of the web face (petstore_web): options checked here, the TUI command built here.

Every browser session runs ``petstore tui`` with the same settings (the connection flags given here are passed
on; the environment is inherited), so policy and confirmation are the TUI's own; the server adds who the person
is (``--web-actor``/``--web-role``, from their token) and the audit log, on by default as for the bots.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from .exits import EXIT_USAGE

if TYPE_CHECKING:  # nothing heavy at import time
    from petstore_cli.settings.load import LoadedSettings
    from petstore_cli.settings.model import Settings
    from petstore_web.access import People, Proxies

REMOTE_WARNING = (
    "petstore: warning: listening on {host}, beyond this machine: the traffic, the token included, "
    "is not encrypted unless a TLS proxy is in front"
)


def web_main(loaded: LoadedSettings, args: argparse.Namespace) -> int:
    from petstore_web.access import Proxies, is_loopback

    if not is_loopback(args.host) and not args.allow_remote:
        print(
            f"petstore: {args.host} is beyond loopback; add --allow-remote to serve other machines "
            "(the traffic is not encrypted: put a TLS proxy in front)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        access = _access(args)
        proxies = Proxies(args.forwarded_allow_ips)
        play = _script(args.play)
    except ValueError as exc:  # TokenError too
        print(f"petstore: {exc}", file=sys.stderr)
        return EXIT_USAGE
    problem = _preflight(loaded, args)
    if problem is not None:
        print(f"petstore: {problem}", file=sys.stderr)
        return EXIT_USAGE
    audit = web_audit_path(loaded.settings)
    _check_audit(audit)  # CommandError (one line, exit 2) when it cannot be opened: said now, not per session
    if getattr(args, "sandbox_reset", False):
        _reset_sandbox(loaded)  # once, here: not in every session
    if not is_loopback(args.host):
        print(REMOTE_WARNING.format(host=args.host), file=sys.stderr)
    return _serve(args, access=access, proxies=proxies, argv=tui_argv(args, play=play, audit=audit))


class _Access(NamedTuple):
    """Who may log in, and how the start-up line tells the owner to: ``token`` is printed (a generated one,
    in the address's fragment, which no server or proxy log sees), ``where`` names the file instead."""

    people: People
    token: str | None = None
    where: str = ""


def _access(args: argparse.Namespace) -> _Access:
    """The people from ``--tokens``, or the owner's token (``--token-file`` or a new one). TokenError: one line.

    A token file readable by others is made 0600 first, with a warning."""
    from petstore_os import tighten
    from petstore_web.access import new_token, owner, read_token, read_tokens

    given = args.tokens or args.token_file
    if given is None:
        return _Access(people=owner(token := new_token()), token=token)
    path = Path(given)
    tighten(path)
    if args.tokens:
        people = read_tokens(path)
        count = f"{len(people)} {'person' if len(people) == 1 else 'people'}"
        return _Access(people=people, where=f"your token ({count} in {path})")
    return _Access(people=owner(read_token(path)), where=f"the token in {path}")


def web_audit_path(settings: Settings) -> Path:
    """``[audit] path`` (``--audit-log`` sets it), else audit.ndjson in the data dir, the bots' default: a browser
    session's writes and refusals are always audited."""
    from petstore_cli.settings.paths import default_data_dir

    return (settings.audit.path or default_data_dir() / "audit.ndjson").expanduser().resolve()


def _check_audit(path: Path) -> None:
    from bot_commands.audit import AuditLog

    AuditLog(path).open().close()


def _preflight(loaded: LoadedSettings, args: argparse.Namespace) -> str | None:
    """What would stop every session's TUI, said once here: an unknown theme, an environment without an address."""
    from petstore_cli.settings.target import resolve_target
    from tui.themes import unknown_theme

    settings = loaded.settings
    resolve_target(settings)  # ConfigError (one line, exit 2, from the dispatcher) when the environment has no address
    theme = getattr(args, "theme", None) or settings.tui.theme or settings.ui.theme
    return unknown_theme(theme) if theme else None


def _script(play: str | None) -> Path | None:
    if play is None:
        return None
    path = Path(play).expanduser().resolve()
    from bot_commands.script import read_script

    try:
        read_script(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read script {play}: {getattr(exc, 'strerror', None) or exc}") from None
    return path


def tui_argv(args: argparse.Namespace, *, play: Path | None, audit: Path) -> tuple[str, ...]:
    """``petstore [connection flags] --audit-log FILE tui [--play SCRIPT --delay S]`` for this Python (the server
    adds each session's ``--web-actor NAME --web-role ROLE``)."""
    argv = [sys.executable, "-P", "-m", "petstore_cli"]  # -P: the working directory is not put on sys.path
    for flag in ("env", "base_url", "config", "theme"):
        value = getattr(args, flag, None)
        if value is not None:
            argv += [f"--{flag.replace('_', '-')}", str(Path(value).resolve()) if flag == "config" else str(value)]
    argv += ["--audit-log", str(audit)]
    if getattr(args, "read_only", None):
        argv.append("--read-only")
    argv.append("tui")
    if play is not None:
        argv += ["--play", str(play)]
        if args.delay is not None:
            argv += ["--delay", str(args.delay)]
    return tuple(argv)


def _reset_sandbox(loaded: LoadedSettings) -> None:
    from petstore_cli.settings.target import resolve_target
    from petstore_server.sandbox import Sandbox

    from .compose import sandbox_dir

    if resolve_target(loaded.settings).sandbox:
        Sandbox.open(sandbox_dir(loaded.settings), reset=True).close()


def _serve(args: argparse.Namespace, *, access: _Access, proxies: Proxies, argv: tuple[str, ...]) -> int:
    from petstore_web.server import WebOptions, serve

    options = WebOptions(
        host=args.host, port=args.port, people=access.people, proxies=proxies, argv=argv, max_sessions=args.max_sessions
    )
    audit = argv[argv.index("--audit-log") + 1]

    def announce(url: str) -> None:
        if access.token is not None:  # after '#': the browser logs in with it, no request carries it
            print(f"petstore web: open {url}#token={access.token}", flush=True)
        else:
            print(f"petstore web: open {url} and log in with {access.where}", flush=True)
        print(
            f"  each browser session runs the TUI as web:NAME (at most {args.max_sessions} at once); "
            f"audit: {audit}; Ctrl-C stops",
            flush=True,
        )

    return serve(options, announce=announce)
