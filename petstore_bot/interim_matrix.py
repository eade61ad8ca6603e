"""Matrix as a :class:`~petstore_bot.transport.Transport`, until :mod:`petstore_bot.matrix` has its own factory:
``transport(wiring)`` builds a :class:`~petstore_bot.matrix.MatrixTransport` from ``[bot.matrix]``.
"""

from __future__ import annotations

import asyncio

from petstore_api.errors import ConfigError

from .addressing import matrix_names
from .chat import Handler, Reply
from .matrix import MatrixError, MatrixTransport
from .matrix_crypto import Crypto
from .transport import TransportError, Wiring, not_set

__all__ = ["MatrixPlatform", "transport"]


class MatrixPlatform:
    """A :class:`MatrixTransport` as the runtime sees a platform."""

    platform = "matrix"
    prefix: str | None = None

    def __init__(self, inner: MatrixTransport, *, user_id: str) -> None:
        self.inner, self.reach = inner, inner.reach
        self._names = matrix_names(user_id)

    @property
    def names(self) -> tuple[str, ...]:
        return self._names

    @property
    def can_post(self) -> bool:
        return self.inner.connected

    def owns(self, room: str) -> bool:
        return room.startswith("!")

    async def run(self, handler: Handler, *, stop: asyncio.Event) -> None:
        try:
            await self.inner.run(handler, stop=stop)
        except MatrixError as exc:
            raise TransportError(str(exc)) from None

    async def announce(self, room: str, reply: Reply, /, *, key: str | None = None) -> bool:
        return await self.inner.announce(room, reply, key=key)


def transport(wiring: Wiring) -> MatrixPlatform:
    """The Matrix transport of ``[bot.matrix]``; ConfigError naming a setting that is missing."""
    bot, where = wiring.bot, wiring.config_where
    matrix = bot.matrix
    if not matrix.homeserver:
        raise not_set("bot.matrix", "homeserver", where)
    if not matrix.user_id:
        raise not_set("bot.matrix", "user_id", where)
    if (matrix.password is None) == (matrix.access_token is None):
        raise ConfigError(
            f"[bot.matrix] needs one of password or access_token: set it in {where} or "
            "PETSTORE_BOT__MATRIX__PASSWORD / PETSTORE_BOT__MATRIX__ACCESS_TOKEN"
        )
    names = matrix_names(matrix.user_id)
    inner = MatrixTransport(
        homeserver=matrix.homeserver,
        user_id=matrix.user_id,
        password=matrix.password.get_secret_value() if matrix.password else None,
        access_token=matrix.access_token.get_secret_value() if matrix.access_token else None,
        rooms=matrix.rooms,
        state_dir=(matrix.state_dir or wiring.state_dir).expanduser(),
        accept_invite=wiring.accept_invite,
        address=wiring.addressing(names),
        reply_style=bot.reply_style,
        crypto=Crypto(key_sharing=matrix.key_sharing, verified_devices=matrix.verified_devices),
        max_backlog_age=bot.max_backlog_age,
        power_levels=wiring.roles.levels,
        replicas=wiring.replicas,
    )
    return MatrixPlatform(inner, user_id=matrix.user_id)
