"""Start a face (tui, chat, run) on a composed session."""

from __future__ import annotations

import argparse
import logging
import sys
import warnings
from pathlib import Path
from typing import Any

from petstore_cli.settings.load import LoadedSettings, load_settings


def run_face(command: str, args: argparse.Namespace) -> int:
    loaded = load(args)
    for warning in loaded.warnings:
        print(f"petstore: warning: {warning}", file=sys.stderr)
    configure_logging(getattr(args, "verbose", None) or 0)
    if command == "chat":
        return _chat(loaded, args)
    if command == "bot":
        return _bot(loaded, args)
    if command == "web":
        from .web import web_main

        return web_main(loaded, args)
    return _run(loaded, args)


def _bot(loaded: LoadedSettings, args: argparse.Namespace) -> int:
    from .bot import matrix_main, slack_main

    reset = bool(getattr(args, "sandbox_reset", False))
    audit_flag = Path(args.audit_log) if getattr(args, "audit_log", None) else None
    verbose = getattr(args, "verbose", None) or 0
    if args.platform == "slack":
        return slack_main(
            loaded.settings,
            config_file=loaded.config_file,
            host=args.host,
            port=args.port,
            mattermost=args.mattermost,
            sandbox_reset=reset,
            audit_flag=audit_flag,
            verbose=verbose,
        )
    return matrix_main(
        loaded.settings, config_file=loaded.config_file, sandbox_reset=reset, audit_flag=audit_flag, verbose=verbose
    )


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The settings given as flags (None: not given)."""
    given: dict[str, Any] = {
        "env": getattr(args, "env", None),
        "base_url": getattr(args, "base_url", None),
        "read_only": getattr(args, "read_only", None) or None,
    }
    if getattr(args, "audit_log", None):
        given["audit"] = {"path": args.audit_log}
    return given


def load(args: argparse.Namespace) -> LoadedSettings:
    return load_settings(config_path=getattr(args, "config", None), overrides=overrides(args))


def configure_logging(verbosity: int) -> None:
    """Warnings as one ``petstore: warning:`` line; request logs only with -v."""
    warnings.showwarning = _show_warning
    logger = logging.getLogger("petstore_api")
    if verbosity <= 0:
        logger.addHandler(logging.NullHandler())  # warnings already reach the user once
        logger.propagate = False
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)


def _show_warning(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
    print(f"petstore: warning: {message}", file=sys.stderr)


def _chat(loaded: LoadedSettings, args: argparse.Namespace) -> int:
    from .chat import chat_main

    return chat_main(loaded.settings, sandbox_reset=bool(getattr(args, "sandbox_reset", False)))


def _run(loaded: LoadedSettings, args: argparse.Namespace) -> int:
    from .runner import RunOptions, run_main

    options = RunOptions(
        script=getattr(args, "script", None),
        commands=tuple(getattr(args, "commands", ())),
        lines=tuple(getattr(args, "lines", ())),
        fmt="jsonl" if args.json else args.format,
        keep_going=bool(getattr(args, "keep_going", False)),
        echo=bool(getattr(args, "echo", False)),
        delay=getattr(args, "delay", 0.0) or 0.0,
        yes=bool(args.yes),
        sandbox_reset=bool(getattr(args, "sandbox_reset", False)),
        prefix="petstore " if getattr(args, "lines", ()) else "/",  # a subcommand: petstore get ID
    )
    return run_main(loaded.settings, options)
