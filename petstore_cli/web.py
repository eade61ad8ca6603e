"""``petstore web``: the wiring of the web face (petstore_web): options checked here, the TUI command built here.

Every browser session runs ``petstore tui`` with the same settings (the connection flags given here are passed
on; the environment is inherited), so policy, confirmation and audit are the TUI's own.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .main import EXIT_USAGE

if TYPE_CHECKING:  # the parser imports this module: nothing heavy at import time
    from petstore_api.settings import LoadedSettings

REMOTE_WARNING = (
    "petstore: warning: listening on {host}, beyond this machine: the traffic, the token included, "
    "is not encrypted unless a TLS proxy is in front"
)


def add_web_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default: 8000; 0 picks a free one)")
    p.add_argument("--play", metavar="SCRIPT", help="play this script of slash commands in every new session")
    p.add_argument("--delay", type=float, default=None, metavar="SECONDS", help="typing delay when playing")
    p.add_argument(
        "--token-file",
        metavar="FILE",
        help="read the access token from FILE (its first line) instead of generating one",
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


def web_main(loaded: LoadedSettings, args: argparse.Namespace) -> int:
    from petstore_web.access import TokenError, is_loopback, new_token, read_token

    if not is_loopback(args.host) and not args.allow_remote:
        print(
            f"petstore: {args.host} is beyond loopback; add --allow-remote to serve other machines "
            "(the traffic is not encrypted: put a TLS proxy in front)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        token = read_token(Path(args.token_file)) if args.token_file else new_token()
        play = _script(args.play)
    except (TokenError, ValueError) as exc:
        print(f"petstore: {exc}", file=sys.stderr)
        return EXIT_USAGE
    problem = _preflight(loaded, args)
    if problem is not None:
        print(f"petstore: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if getattr(args, "sandbox_reset", False):
        _reset_sandbox(loaded)  # once, here: not in every session
    if not is_loopback(args.host):
        print(REMOTE_WARNING.format(host=args.host), file=sys.stderr)
    return _serve(args, token=token, argv=tui_argv(args, play=play))


def _preflight(loaded: LoadedSettings, args: argparse.Namespace) -> str | None:
    """What would stop every session's TUI, said once here: an unknown theme, an environment without an address."""
    from petstore_api.settings import resolve_target
    from tui.themes import unknown_theme

    settings = loaded.settings
    resolve_target(settings)  # ConfigError (one line, exit 2, from run_face) when the environment has no address
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


def tui_argv(args: argparse.Namespace, *, play: Path | None) -> tuple[str, ...]:
    """``petstore [connection flags] tui [--play SCRIPT --delay S]`` for this Python."""
    argv = [sys.executable, "-m", "petstore_cli"]
    for flag in ("env", "base_url", "config", "audit_log", "theme"):
        value = getattr(args, flag, None)
        if value is not None:
            argv += [
                f"--{flag.replace('_', '-')}",
                str(Path(value).resolve()) if flag in ("config", "audit_log") else str(value),
            ]
    if getattr(args, "read_only", None):
        argv.append("--read-only")
    argv.append("tui")
    if play is not None:
        argv += ["--play", str(play)]
        if args.delay is not None:
            argv += ["--delay", str(args.delay)]
    return tuple(argv)


def _reset_sandbox(loaded: LoadedSettings) -> None:
    from petstore_api.settings import resolve_target
    from petstore_server.sandbox import Sandbox

    from .compose import sandbox_dir

    if resolve_target(loaded.settings).sandbox:
        Sandbox.open(sandbox_dir(loaded.settings), reset=True).close()


def _serve(args: argparse.Namespace, *, token: str, argv: tuple[str, ...]) -> int:
    from petstore_web.server import WebOptions, serve

    options = WebOptions(host=args.host, port=args.port, token=token, argv=argv, max_sessions=args.max_sessions)

    def announce(url: str) -> None:
        print(f"petstore web: open {url}", flush=True)
        print(f"  each browser session runs the TUI (at most {args.max_sessions} at once); Ctrl-C stops", flush=True)

    return serve(options, announce=announce)
