"""Slack (and Mattermost) as a :class:`~petstore_bot.transport.Transport`, until :mod:`petstore_bot.slack` has its
own factory: ``transport(wiring)`` checks ``[bot.slack]`` (or ``[bot.mattermost]``) and the options ``host``,
``port``, ``mattermost`` and ``socket_mode`` (``petstore bot slack --port ...``); ``run`` serves the endpoints with
uvicorn (the runtime's signals stop it) or holds the Socket Mode connection, until the runtime's stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from petstore_api.errors import ConfigError

from .assembly import secret_setting
from .chat import Handler, Reply
from .settings import BotSettings
from .transport import TransportError, Wiring, not_set

if TYPE_CHECKING:  # pragma: no cover
    from .slack import SlackFace
    from .slack_verify import MattermostToken, SlackSignature

__all__ = ["SlackPlatform", "slack_token", "transport"]

log = logging.getLogger("petstore_bot")


def slack_token(bot: BotSettings, name: Literal["app_token", "bot_token"], *, where: str, shape: str) -> str | None:
    """``[bot.slack] <name>``, or the token in the file ``<name>_file`` names; None when neither is set. ConfigError,
    naming the setting, when both are, the file cannot be read, or the token does not start with ``shape``."""
    setting = f"[bot.slack] {name}"
    value = secret_setting(getattr(bot.slack, name), getattr(bot.slack, f"{name}_file"), setting=setting, where=where)
    if value is not None and not value.startswith(shape):
        raise ConfigError(f"{setting} does not look like one: Slack's start with {shape}... (Basic Information)")
    return value


@dataclass(frozen=True, slots=True)
class _Checked:
    """What the settings and options say: the flavour and how it is reached, with the secrets each needs."""

    flavour: Literal["slack", "mattermost"]
    signature: SlackSignature | None
    token: MattermostToken | None
    app_token: str | None
    bot_token: str | None
    host: str
    port: int


def _checked(wiring: Wiring) -> _Checked:
    """ConfigError, naming the setting, for what is missing."""
    from .slack_verify import MattermostToken, SlackSignature

    bot, where, options = wiring.bot, wiring.config_where, wiring.options
    mattermost, socket_mode = bool(options.get("mattermost")), bool(options.get("socket_mode"))
    host, port = str(options.get("host", "127.0.0.1")), int(options.get("port", 3000))
    if mattermost:
        if socket_mode:
            raise ConfigError("--socket-mode is Slack's: Mattermost calls the bot over HTTP (leave out one of them)")
        if not bot.mattermost.url or bot.mattermost.token is None:
            raise not_set("bot.mattermost", "url" if not bot.mattermost.url else "token", where)
        token = MattermostToken(bot.mattermost.token.get_secret_value())
        return _Checked("mattermost", None, token, None, None, host, port)
    app_token = slack_token(bot, "app_token", where=where, shape="xapp-") if socket_mode else None
    if socket_mode and app_token is None:
        raise not_set("bot.slack", "app_token", where)
    if not socket_mode and bot.slack.signing_secret is None:
        raise not_set("bot.slack", "signing_secret", where)
    signature = SlackSignature(bot.slack.signing_secret.get_secret_value()) if bot.slack.signing_secret else None
    bot_token = slack_token(bot, "bot_token", where=where, shape="xoxb-")
    return _Checked("slack", signature, None, app_token, bot_token, host, port)


class SlackPlatform:
    """The Slack face as the runtime sees a platform; the face is made on the core when it runs."""

    reach = None

    def __init__(self, wiring: Wiring, checked: _Checked) -> None:
        self.platform = checked.flavour
        self.prefix: str | None = wiring.bot.slack.command + " "
        self._wiring, self._checked = wiring, checked
        self._face: SlackFace | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return ()

    @property
    def can_post(self) -> bool:
        return self._face is not None and self._face.can_announce

    def owns(self, room: str) -> bool:
        return not room.startswith("!")

    async def announce(self, room: str, reply: Reply, /, *, key: str | None = None) -> bool:
        return self._face is not None and await self._face.announce(room, reply, key=key)

    async def run(self, handler: Handler, *, stop: asyncio.Event) -> None:
        from .slack_web import SlackWebError

        face = self._face = self._made()
        checked, api_url = self._checked, self._wiring.bot.slack.api_url
        where = f"Socket Mode via {api_url}" if checked.app_token else f"http://{checked.host}:{checked.port}"
        log.info("petstore bot %s on %s", checked.flavour, where)
        try:
            await face.start()
            if self._checked.app_token is not None:
                from .slack_socket import SocketMode

                await SocketMode(face=face, app_token=self._checked.app_token, api_url=api_url).run(stop)
            else:
                await self._serve_http(face, stop)
        except SlackWebError as exc:
            raise TransportError(str(exc)) from None

    def _made(self) -> SlackFace:
        from .slack import SLACK_ORIGIN, SlackFace, post_json
        from .slack_web import SlackWeb

        checked, bot = self._checked, self._wiring.bot
        token = checked.bot_token
        web = SlackWeb(bot_token=token, api_url=bot.slack.api_url) if token else None
        if token is None and checked.flavour == "slack":
            log.info("[bot.slack] bot_token is not set: slash commands only (mentions and DMs need it)")
        return SlackFace(
            core=self._wiring.core(),
            flavour=checked.flavour,
            post=post_json,
            signature=checked.signature,
            token=checked.token,
            response_origin=(bot.mattermost.url or "") if checked.flavour == "mattermost" else SLACK_ORIGIN,
            web=web,
        )

    async def _serve_http(self, face: SlackFace, stop: asyncio.Event) -> None:
        """The endpoints on ``host:port`` until ``stop``; TransportError when they cannot listen there."""
        import uvicorn

        class Embedded(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:  # the runtime's handlers set ``stop``
                yield

        config = uvicorn.Config(
            face.app(),
            host=self._checked.host,
            port=self._checked.port,
            log_level="warning",
            log_config=None,  # uvicorn's lines go through the bot's handler and format
            access_log=False,
            lifespan="on",
        )
        server = Embedded(config)

        async def stopping() -> None:
            await stop.wait()
            server.should_exit = True

        watch = asyncio.create_task(stopping())
        try:
            await server.serve()
        except (OSError, SystemExit):  # uvicorn exits when it cannot listen (it logged why)
            server.started = False
        finally:
            watch.cancel()
        if not server.started:
            raise TransportError(f"cannot serve on http://{self._checked.host}:{self._checked.port}")


def transport(wiring: Wiring) -> SlackPlatform:
    """The Slack (or Mattermost) transport of the settings and options; ConfigError naming what is missing."""
    return SlackPlatform(wiring, _checked(wiring))
