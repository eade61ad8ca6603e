"""The contract between the bot runtime and a chat platform: a transport is one module, found by name.

A transport connects to one chat server as the bot, hands every message addressed to the bot to the runtime's
handler and sends back what it returns; it posts unasked (watches, schedules, requests for approval) with
:meth:`Transport.announce`. It knows nothing of roles, confirmations, approvals, watches, schedules, the audit or the
lease: the runtime does all of that, the same for every platform.

People and rooms cross this seam in one identity form, ``<platform>:<id>`` (``irc:alice``, ``irc:#ops``,
``xmpp:alice@example.org``, ``xmpp:ops@conference.example.org``); Matrix and Slack keep the ids their platforms give,
which say what they are by themselves (``@alice:example.org``, ``!room:example.org``; ``U123``, ``C123``), so role
lists written for them stay valid. :meth:`Transport.owns` says whether a room id is the transport's: the runtime
routes an announcement to the transport that owns its room.

A platform registers its factory in :data:`FACTORIES` (one line: the platform's name and the module that holds
``transport(wiring)``); the module is imported only when the config names its section, so a platform's SDK is
loaded only by a bot that uses it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from petstore_api.errors import ConfigError

from .addressing import Address
from .chat import Handler, Reply

if TYPE_CHECKING:  # pragma: no cover (asyncio too: ``petstore --help`` lists the platforms, loading no asyncio)
    import asyncio

    from .core import BotCore
    from .replicas import Reach, Replicas
    from .roles import RoleBook
    from .settings import BotSettings

__all__ = ["FACTORIES", "Factory", "Transport", "TransportError", "Wiring", "factory_of", "not_set"]


class TransportError(Exception):
    """A transport that failed for good (the runtime wraps whatever :meth:`Transport.run` raised in it, as
    ``<platform>: <message>``): every transport is stopped, and the process says it in one line and exits 1."""


class Transport(Protocol):
    """A chat platform as the runtime sees it (see the module docstring)."""

    #: The platform's name: ``"irc"``; the ``<platform>`` of the identities it hands over, and ``Incoming.platform``.
    platform: str

    @property
    def reach(self) -> Reach | None:
        """Up while the transport is connected and its messages come through (None: always, e.g. an HTTP endpoint);
        the gate of the lease, so a replica that cannot reach its server does not hold it. (A property: an
        attribute of type ``Reach`` satisfies it.)"""
        ...

    @property
    def names(self) -> tuple[str, ...]:
        """What people call the bot on this platform (its nick, localpart, full id), for ``name: command``."""
        ...

    @property
    def can_post(self) -> bool:
        """Whether :meth:`announce` can post now (connected, joined)."""
        ...

    def owns(self, room: str) -> bool:
        """Whether ``room`` (an identity as the runtime keeps it) is one of this platform's rooms."""
        ...

    async def run(self, handler: Handler, *, stop: asyncio.Event) -> None:
        """Connect, hand every message addressed to the bot to ``handler`` and send its reply, reconnecting with
        backoff when the server goes away, until ``stop`` is set; then leave and return. Raises only for what
        retrying cannot mend (refused credentials, a config the server rejects), in one line."""
        ...

    async def announce(self, room: str, reply: Reply, /, *, key: str | None = None) -> bool:
        """Post ``reply`` in ``room`` unasked, pinging nobody. ``key`` names the post for exactly-once delivery
        where the platform can deduplicate (Matrix transaction ids); the runtime's store claims it under the lease
        before this is called either way. False when it could not be posted now (try again later)."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Wiring:
    """What the runtime gives a platform's factory: the shared ``[bot]`` settings (the platform reads its own
    section from them), where it may keep files (0600), and the hooks into the core it may need."""

    bot: BotSettings
    state_dir: Path
    #: Where the settings came from, for one-line errors that say where to set a missing value.
    config_where: str
    #: The rule for which messages are commands (the prefix, ``nick: command``, bare in a direct chat), given the
    #: names people call the bot here: ``addressing(names)(text, direct=...)`` is the command line, or None.
    addressing: Callable[[Sequence[str]], Address]
    #: Whether to accept an invitation from ``inviter`` into ``room`` (``direct``: a one-to-one chat).
    accept_invite: Callable[[str, bool, str], bool]
    #: Who answers a message among replicas that all see every message (None: a single process).
    replicas: Replicas | None = None
    #: The roles the core reads; a platform whose rooms grant roles themselves keeps its part current (Matrix power
    #: levels: ``roles.levels``). None: the platform's rooms grant nothing of their own.
    roles: RoleBook | None = None
    #: The bot core, for a face that renders its outcomes itself (Slack's Block Kit and buttons under a slash
    #: command's own prefix): it answers through the core rather than through the handler's replies. None: the
    #: handler is all a transport needs.
    core: BotCore | None = None
    #: Where a platform that calls the bot over HTTP (Slack, Mattermost) finds its endpoints: ``--host``, ``--port``.
    listen: tuple[str, int] = ("127.0.0.1", 3000)
    #: Slack over its Socket Mode rather than HTTP endpoints (``--socket-mode``).
    socket_mode: bool = False


Factory = Callable[[Wiring], "Transport"]

#: Each platform's module (holding ``transport(wiring: Wiring) -> Transport``; ``module:function`` when the factory
#: has another name), by the name of its ``[bot.<name>]`` section and of ``petstore bot <name>`` (in this order in
#: ``petstore bot --help``; its help is the section's docstring: petstore_cli.bot_options).
FACTORIES: dict[str, str] = {
    "matrix": "petstore_bot.matrix",
    "irc": "petstore_bot.irc",
    "slack": "petstore_bot.slack_transport",
    "mattermost": "petstore_bot.slack_transport:mattermost",
    "xmpp": "petstore_bot.xmpp",
}


def factory_of(platform: str) -> Factory:
    """The factory of ``platform``, its module imported now; KeyError for a platform no module registers."""
    module, _, name = FACTORIES[platform].partition(":")
    made: Factory = getattr(importlib.import_module(module), name or "transport")
    return made


def not_set(section: str, name: str, where: str) -> ConfigError:
    """The one-line error of a factory whose ``[<section>] <name>`` is missing: where to set it (``where``: the
    config file), and the environment variable that sets it too."""
    variable = f"PETSTORE_{section.upper().replace('.', '__')}__{name.upper()}"
    return ConfigError(f"[{section}] {name} is not set: set it in {where} or {variable}")
