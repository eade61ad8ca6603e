"""``petstore bot [PLATFORM]``'s parser: a subcommand for each platform of the registry.

Each platform :data:`petstore_bot.transport.FACTORIES` registers is ``petstore bot <platform>`` (in registry order),
with the help its settings section's docstring gives (``[bot.<platform>]`` in
:class:`petstore_bot.settings.BotSettings`: the first paragraph in the list, the rest in its own ``--help``), the
options every face takes, ``--metrics-port``, and the options of its own :data:`OWN_OPTIONS` declares. A registry
entry in :data:`FLAVOURS` is a flag of another platform's subcommand instead (``petstore bot slack --mattermost``).
The shell completion reads the platforms off this parser too, so a new platform touches nothing here unless it has
options of its own.

Imported only when the bot's parser is built (:mod:`petstore_cli.options`): ``petstore --version`` and ``petstore
run`` never load the registry. The settings (pydantic) are loaded only when the bot's parser is built alone, for
``petstore bot ...``: ``petstore --help`` and the completion name the platforms without them.
"""

from __future__ import annotations

import argparse
import inspect
from collections.abc import Callable, Sequence

from petstore_bot.transport import FACTORIES
from petstore_os.arguments import port_number

__all__ = ["FLAVOURS", "OWN_OPTIONS", "add_bot_parser", "chosen_platform", "platforms"]


def _slack(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=port_number, default=3000, help="port (default: 3000)")
    parser.add_argument(
        "--socket-mode",
        action="store_true",
        help="connect out to Slack over Socket Mode (no public URL; the app-level token: [bot.slack] app_token)",
    )


#: The options a platform has beyond those every platform takes, by its registry name.
OWN_OPTIONS: dict[str, Callable[[argparse.ArgumentParser], None]] = {"slack": _slack}
#: Registry entries run as a flavour of another platform, by the flag ``--<name>`` of that platform's subcommand
#: rather than a subcommand of their own: the platform, by the flavour's name.
FLAVOURS: dict[str, str] = {"mattermost": "slack"}


def platforms() -> list[str]:
    """The platforms ``petstore bot`` takes as its subcommand, in registry order."""
    return [name for name in FACTORIES if name not in FLAVOURS]


def chosen_platform(args: argparse.Namespace) -> str | None:
    """The registry name of the platform ``args`` chose: a flavour whose flag is set, else the subcommand's; None:
    none was named (every platform the config names)."""
    flavour = next((name for name in FLAVOURS if getattr(args, name, False)), None)
    platform: str | None = getattr(args, "platform", None)
    return flavour or platform


def section_help(platform: str) -> tuple[str, str]:
    """``platform``'s help and description: the first paragraph of its settings section's docstring (its trailing
    period off) and the rest (or the first again), as plain text."""
    from petstore_bot import settings  # pydantic: only for a help to be shown

    section = settings.BotSettings.model_fields[platform].annotation
    first, _, rest = (inspect.getdoc(section) or platform).replace("``", "").partition("\n\n")
    return first.removesuffix("."), rest or first


def add_bot_parser(
    add_parser: Callable[..., argparse.ArgumentParser], common: Sequence[argparse.ArgumentParser], *, described: bool
) -> None:
    """``petstore bot`` and a subcommand for each of :func:`platforms`; ``described``: with each platform's help
    from its settings section (which loads the settings: not for ``petstore --help`` or the completion, which show
    the platforms' names only)."""
    names = platforms()
    bot = add_parser(
        "bot",
        help=f"run the chat bot (every platform the config names, or one: {', '.join(names)})",
        description="Serve the slash commands in team chat: !list, !add ..., with roles, "
        "confirmation and an audit log ([bot] in the config). Without a PLATFORM, on every platform the config "
        "has a [bot.<platform>] section for, in one process.",
    )
    metrics_option(bot)
    subcommands = bot.add_subparsers(dest="platform", metavar="PLATFORM", required=False)
    for name in names:
        _add_platform(subcommands.add_parser, common, name=name, described=described)


def _add_platform(
    add_parser: Callable[..., argparse.ArgumentParser],
    common: Sequence[argparse.ArgumentParser],
    *,
    name: str,
    described: bool,
) -> None:
    """``petstore bot <name>``: the options every platform takes, its own, and a flag for each of its flavours."""
    summary, description = section_help(name) if described else (None, None)
    platform = add_parser(name, parents=common, help=summary, description=description)
    if name in OWN_OPTIONS:
        OWN_OPTIONS[name](platform)
    for flavour in [flavour for flavour, of in FLAVOURS.items() if of == name]:
        flag_help = section_help(flavour)[0] if described else None
        platform.add_argument(f"--{flavour}", dest=flavour, action="store_true", help=flag_help)
    metrics_option(platform)


def metrics_option(parser: argparse.ArgumentParser) -> None:
    """``--metrics-port``: on ``petstore bot`` and each of its platforms."""
    parser.add_argument(
        "--metrics-port",
        type=port_number,
        metavar="PORT",
        help="serve GET /healthz and GET /metrics (Prometheus) on 127.0.0.1:PORT (default: off; 0 picks a free one)",
    )
