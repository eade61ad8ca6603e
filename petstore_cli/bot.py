"""``petstore bot [PLATFORM]``: the options and the settings of the bot, handed to its runtime
(:class:`petstore_bot.runtime.BotRuntime`), which runs every platform the config names (or the one named).

The bot's composition is the face's own with the audit log always on (:func:`audit_path`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from petstore_bot.runtime import BotRuntime, Intervals, Launch, configured_platforms
from petstore_cli.settings.model import Settings
from petstore_cli.settings.paths import default_config_path, default_data_dir

from .bot_options import chosen_platform
from .compose import Composition, compose
from .startup import started

__all__ = ["audit_path", "bot_main", "compose_bot"]


def audit_path(settings: Settings, *, flag: Path | None = None) -> Path:
    """``--audit-log``, else ``[bot] audit_log``, else ``[audit] path``, else audit.ndjson in the platform data dir."""
    chosen = flag or settings.bot.audit_log or settings.audit.path or default_data_dir() / "audit.ndjson"
    return chosen.expanduser()


def compose_bot(settings: Settings, *, sandbox_reset: bool = False, audit_flag: Path | None = None) -> Composition:
    """The composition a bot runs on: the face's own, with the audit log at :func:`audit_path`."""
    audit = settings.audit.model_copy(update={"path": audit_path(settings, flag=audit_flag)})
    return compose(settings.model_copy(update={"audit": audit}), sandbox_reset=sandbox_reset)


def bot_main(settings: Settings, args: argparse.Namespace, *, config_file: Path | None) -> int:
    """Entry point of ``petstore bot [PLATFORM]``; the exit code (0 after SIGTERM or Ctrl-C).

    ``--audit-log`` wins over ``[bot] audit_log`` as flags win everywhere.
    """
    bot = settings.bot
    named = chosen_platform(args)  # a subcommand, or a flavour's flag (petstore bot slack --mattermost)
    platforms = (named,) if named else configured_platforms(bot)
    audit_flag = Path(args.audit_log) if getattr(args, "audit_log", None) else None
    matrix_dir = bot.matrix.state_dir if "matrix" in platforms else None  # where a Matrix bot always kept it
    launch = Launch(
        bot=bot,
        platforms=platforms,
        service=lambda: compose_bot(
            settings, sandbox_reset=bool(getattr(args, "sandbox_reset", False)), audit_flag=audit_flag
        ),
        state_dir=(matrix_dir or default_data_dir() / "bot").expanduser(),
        config_where=str(config_file or default_config_path()),
        listen=(getattr(args, "host", None) or "127.0.0.1", getattr(args, "port", None) or 3000),
        # every platform at once: Slack over Socket Mode unless its HTTP endpoints have their signing secret
        socket_mode=bool(getattr(args, "socket_mode", False)) or (not named and bot.slack.signing_secret is None),
        metrics_port=getattr(args, "metrics_port", None),
        verbose=getattr(args, "verbose", None) or 0,
        intervals=Intervals.for_lease(bot.lease_ttl),
        started=started,  # start-up ends once the runtime has opened its platforms (their SDKs imported)
    )
    return BotRuntime(launch).run()
