"""Slack and Mattermost as transports (:mod:`petstore_bot.transport`): the factories of ``slack`` and ``mattermost``.

:class:`SlackTransport` runs a :class:`~petstore_bot.slack.SlackFace` until stopped: it serves the face's HTTP
endpoints with uvicorn on ``Wiring.listen`` (Slack's signed requests; Mattermost's token), or, with
``Wiring.socket_mode``, holds Slack's Socket Mode connection (:mod:`petstore_bot.slack_socket`). It posts unasked
(``chat.postMessage``) when ``[bot.slack] bot_token`` is set; Mattermost never does (``can_post`` is False).

The face renders outcomes itself (Block Kit, buttons, a slash command's own prefix), so it answers through the bot
core it was built with (``Wiring.core``, whose ``handle`` is the runtime's handler), not through the handler's
text replies.

Rooms: Slack channel ids (``C…`` public, ``G…`` private, ``D…`` direct), alone or after the team (``T123/C456``, as
the face names a message's room); Mattermost channel ids, 26 lower-case letters and digits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal

import uvicorn

from petstore_api.errors import ConfigError

from .chat import Handler, Reply
from .replicas import Reach
from .settings import BotSettings
from .slack import SlackFace, post_json
from .slack_verify import MattermostToken, SlackSignature
from .slack_web import SlackWeb
from .transport import Wiring, not_set

if TYPE_CHECKING:  # pragma: no cover
    from .core import BotCore
    from .slack_socket import SocketMode
    from .transport import Transport

__all__ = ["SlackTransport", "mattermost", "owns_room", "slack_token", "transport"]

log = logging.getLogger("petstore_bot.slack")
Flavour = Literal["slack", "mattermost"]
_SLACK_ROOM = re.compile(r"(?:T[A-Z0-9]+/)?[CDG][A-Z0-9]{6,}")
_MATTERMOST_ROOM = re.compile(r"[a-z0-9]{26}")


def owns_room(flavour: Flavour, room: str) -> bool:
    """Whether ``room`` is a channel id of ``flavour`` (see the module docstring)."""
    shape = _SLACK_ROOM if flavour == "slack" else _MATTERMOST_ROOM
    return shape.fullmatch(room) is not None


class SlackTransport:
    """A Slack or Mattermost face as a transport (see the module docstring)."""

    #: Always up: Slack and Mattermost call the bot (or Slack's socket client reconnects by itself).
    reach: Reach | None = None

    def __init__(self, *, face: SlackFace, listen: tuple[str, int], socket: SocketMode | None = None) -> None:
        self.face, self.listen, self._socket = face, listen, socket
        self.platform: str = face.flavour

    def __repr__(self) -> str:
        where = "Socket Mode" if self._socket is not None else f"http://{self.listen[0]}:{self.listen[1]}"
        return f"SlackTransport({self.platform}, {where})"

    @property
    def names(self) -> tuple[str, ...]:
        """The bot's ``@name`` once the face knows it (``auth.test``)."""
        return self.face.names

    @property
    def can_post(self) -> bool:
        return self.face.can_announce

    def owns(self, room: str) -> bool:
        return owns_room(self.face.flavour, room)

    async def announce(self, room: str, reply: Reply, /, *, key: str | None = None) -> bool:
        return await self.face.announce(room, reply, key=key)

    async def run(self, handler: Handler, *, stop: asyncio.Event) -> None:
        """Serve until ``stop`` is set (``handler``: the core's, which the face answers through already); SlackWebError
        when Slack refuses a token, ConfigError when the endpoints cannot listen."""
        await self.face.start()
        if self._socket is not None:
            await self._socket.run(stop)
            return
        host, port = self.listen
        server = _Server(
            uvicorn.Config(
                self.face.app(),
                host=host,
                port=port,
                log_level="warning",
                log_config=None,  # uvicorn's lines go through the bot's handler and format
                access_log=False,
                lifespan="on",
            )
        )
        serving = asyncio.create_task(server.serve())
        stopping = asyncio.create_task(stop.wait())
        try:
            await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            server.should_exit = True
            stopping.cancel()
            with contextlib.suppress(SystemExit):  # uvicorn exits when it cannot listen (it logged why)
                await serving
        if not server.started:
            raise ConfigError(f"cannot serve the {self.platform} endpoints on http://{host}:{port} (the log says why)")


class _Server(uvicorn.Server):
    """uvicorn leaving SIGINT and SIGTERM to the runtime, which sets the stop event the transport ends on."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def transport(wiring: Wiring) -> SlackTransport:
    """Slack's transport (``[bot.slack]``): Socket Mode with its app token when ``Wiring.socket_mode``, else the HTTP
    endpoints, checked with the signing secret. ConfigError, in one line naming the setting, when one is missing."""
    bot, where = wiring.bot, wiring.config_where
    bot_token = slack_token(bot, "bot_token", where=where, shape="xoxb-")
    web = SlackWeb(bot_token=bot_token, api_url=bot.slack.api_url) if bot_token else None
    if bot_token is None:
        log.info("[bot.slack] bot_token is not set: slash commands only (mentions and DMs need it)")
    if wiring.socket_mode:
        app_token = slack_token(bot, "app_token", where=where, shape="xapp-")
        if app_token is None:
            raise not_set("bot.slack", "app_token", where)
        from .slack_socket import SocketMode

        face = SlackFace(core=_core(wiring), flavour="slack", post=post_json, web=web)
        return SlackTransport(
            face=face,
            listen=wiring.listen,
            socket=SocketMode(face=face, app_token=app_token, api_url=bot.slack.api_url),
        )
    if bot.slack.signing_secret is None:
        raise not_set("bot.slack", "signing_secret", where)
    signature = SlackSignature(bot.slack.signing_secret.get_secret_value())
    face = SlackFace(core=_core(wiring), flavour="slack", post=post_json, signature=signature, web=web)
    return SlackTransport(face=face, listen=wiring.listen)


def mattermost(wiring: Wiring) -> SlackTransport:
    """Mattermost's transport (``[bot.mattermost]``): its slash command and buttons over HTTP, checked with its
    token. ConfigError, in one line, when the URL or the token is not set, or Socket Mode (Slack's) is asked for."""
    settings, where = wiring.bot.mattermost, wiring.config_where
    if wiring.socket_mode:
        raise ConfigError("--socket-mode is Slack's: Mattermost calls the bot over HTTP (leave out one of them)")
    if not settings.url or settings.token is None:
        raise not_set("bot.mattermost", "url" if not settings.url else "token", where)
    face = SlackFace(
        core=_core(wiring),
        flavour="mattermost",
        post=post_json,
        token=MattermostToken(settings.token.get_secret_value()),
        response_origin=settings.url,
    )
    return SlackTransport(face=face, listen=wiring.listen)


def _core(wiring: Wiring) -> BotCore:
    if wiring.core is None:
        raise ValueError("the Slack and Mattermost faces answer through the bot core: give Wiring.core")
    return wiring.core


def slack_token(bot: BotSettings, name: Literal["app_token", "bot_token"], *, where: str, shape: str) -> str | None:
    """``[bot.slack] <name>``, or the token in the file ``<name>_file`` names; None when neither is set. ConfigError,
    naming the setting, when both are, the file cannot be read, or the token does not start with ``shape``."""
    from .secret_files import one_secret

    value = one_secret(
        setting=f"[bot.slack] {name}",
        given=getattr(bot.slack, name),
        path=getattr(bot.slack, f"{name}_file"),
        where=where,
    )
    if value is None:
        return None
    if not value.startswith(shape):
        raise ConfigError(
            f"[bot.slack] {name} does not look like one: Slack's start with {shape}... (Basic Information)"
        )
    return value


def _contract(made: SlackTransport) -> Transport:  # pragma: no cover
    """The transport contract, checked by mypy: a SlackTransport is a Transport."""
    return made
