"""The bot's account on its homeserver: one matrix-nio call per method, its errors sorted, and the retry around them.

A call's failure is either for good (:class:`MatrixError`: bad login, token revoked; the bot stops) or worth
retrying (:class:`Transient`, and :class:`RateLimited` for a 429, waited out as the homeserver asks, with a log line
naming Synapse's ``override_ratelimit``). :meth:`Homeserver.retry` runs a call until it succeeds or ``stop`` is set,
with capped exponential backoff. No message or log line carries the password or a token (:meth:`Homeserver.redact`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

import aiohttp
from nio import (
    AsyncClient,
    EncryptionError,
    JoinResponse,
    LocalProtocolError,
    LoginResponse,
    OlmUnverifiedDeviceError,
    RoomLeaveResponse,
    RoomMessagesResponse,
    RoomSendResponse,
    WhoamiResponse,
)

from petstore_bot.matrix_crypto import Crypto

log = logging.getLogger("petstore_bot.matrix")
T = TypeVar("T")
JSON = dict[str, object]

#: Error codes of a refusal for good.
FATAL = {"M_UNKNOWN_TOKEN", "M_MISSING_TOKEN", "M_FORBIDDEN", "M_USER_DEACTIVATED", "M_INVALID_USERNAME"}
#: The network's failures: retried.
NETWORK = (aiohttp.ClientError, TimeoutError, OSError)
RATE_LIMITED = (
    "rate-limited by the homeserver (429) on %s; retrying in %.1fs. Exempt the bot: Synapse's admin API "
    'POST /_synapse/admin/v1/users/%s/override_ratelimit with {"messages_per_second": 0, "burst_count": 0}'
)


class MatrixError(Exception):
    """The homeserver refused the bot for good (bad login, token revoked). Never carries a secret."""


class Transient(Exception):
    """A homeserver error worth retrying."""


class RateLimited(Transient):
    """429 ``M_LIMIT_EXCEEDED``: retried after the wait the homeserver asks for."""

    def __init__(self, text: str, *, retry_after: float) -> None:
        super().__init__(text)
        self.retry_after = retry_after


class Homeserver:
    """The calls the transport makes as ``user_id`` on ``url``, each raising Transient or MatrixError."""

    def __init__(
        self,
        *,
        url: str,
        user_id: str,
        password: str | None,
        access_token: str | None,
        crypto: Crypto,
        backoff_max: float,
    ) -> None:
        self.url = url
        self.user_id = user_id
        self._password = password
        self._token = access_token
        self._session_token: str | None = None
        self._crypto = crypto
        self._backoff_max = backoff_max

    async def log_in(self, client: AsyncClient) -> None:
        """Logs ``client`` in: with the access token (its device from whoami), else with the password."""
        if self._token is not None:
            client.user_id, client.access_token = self.user_id, self._token  # whoami first: the token's device
            who = await client.whoami()
            if not isinstance(who, WhoamiResponse):
                raise self.error("login", who)
            client.restore_login(user_id=self.user_id, device_id=who.device_id or "", access_token=self._token)
        else:
            response = await client.login(password=self._password, device_name="petstore bot")
            if not isinstance(response, LoginResponse):
                raise self.error("login", response)
            self._session_token = response.access_token

    async def join(self, client: AsyncClient, *, room: str) -> bool:
        """Joins ``room`` (an id or alias); a refusal is logged, not retried."""
        response = await client.join(room)
        if not isinstance(response, JoinResponse):
            log.warning("could not join %s: %s", room, self.redact(str(response)))
        return True

    async def leave(self, client: AsyncClient, *, room: str) -> bool:
        """Leaves ``room`` (declines its invite); a refusal is logged, not retried."""
        response = await client.room_leave(room)
        if not isinstance(response, RoomLeaveResponse):
            log.warning("could not decline %s: %s", room, self.redact(str(response)))
        return True

    async def send(self, client: AsyncClient, *, room_id: str, content: JSON, tx_id: str) -> str:
        """Sends a message; its event id, or "" when the homeserver refused it for good (given up)."""
        try:
            async with self._crypto.sending(client, room_id):
                response = await client.room_send(
                    room_id,
                    "m.room.message",
                    content,
                    tx_id=tx_id,
                    ignore_unverified_devices=self._crypto.key_sharing == "tofu",
                )
        except (LocalProtocolError, EncryptionError, OlmUnverifiedDeviceError) as exc:
            raise Transient(f"could not encrypt for {room_id}: {describe(exc)}") from None
        if isinstance(response, RoomSendResponse):
            return str(response.event_id)
        code = getattr(response, "status_code", None)
        if code in FATAL:  # e.g. no longer in the room: give this reply up, keep serving
            log.warning("reply to %s refused: %s", room_id, self.redact(str(response)))
            return ""
        raise self.error("send", response)

    async def deliver(
        self, client: AsyncClient, *, room_id: str, content: JSON, tx_id: str, stop: asyncio.Event, what: str
    ) -> str | None:
        """:meth:`send`, retried until the homeserver took it (its event id) or refused it for good (""); None when
        ``stop`` came first. A send under way is finished, not abandoned: it may have gone out already."""
        call = functools.partial(self.send, client, room_id=room_id, content=content, tx_id=tx_id)
        return await self.retry(call, stop=stop, what=what, race_call=False)

    async def page(
        self, client: AsyncClient, *, room_id: str, start: str | None, since: str
    ) -> tuple[list[Mapping[str, object]], str | None]:
        """One page of ``room_id``'s timeline back from ``start`` towards ``since``, newest first, and where the
        next page starts."""
        response = await client.room_messages(room_id, start=start or "", end=since, limit=100)
        if not isinstance(response, RoomMessagesResponse):
            raise Transient(self.redact(str(response)))
        return [e.source for e in response.chunk], response.end

    def error(self, what: str, response: object) -> Exception:
        """The exception for a failed ``what`` (``login``, ``sync``...): RateLimited, MatrixError or Transient."""
        code = getattr(response, "status_code", None)
        text = self.redact(f"{what} failed for {self.user_id}: {response}")
        if code == "M_LIMIT_EXCEEDED":
            wait = getattr(response, "retry_after_ms", None)
            return RateLimited(text, retry_after=wait / 1000 if isinstance(wait, int) else 5.0)
        return MatrixError(text) if code in FATAL else Transient(text)

    async def retry(
        self, call: Callable[[], Awaitable[T]], *, stop: asyncio.Event, what: str, race_call: bool = True
    ) -> T | None:
        """``call()`` until it succeeds, with capped exponential backoff; None when ``stop`` ends the wait.

        ``race_call=False``: a call already started is not abandoned when ``stop`` comes (a send that must
        either go out or be known not to)."""
        attempt = 0
        while True:
            try:
                result = await (until(call(), stop) if race_call else call())
                return None if result is None and stop.is_set() else result
            except RateLimited as exc:
                delay = exc.retry_after
                log.warning(RATE_LIMITED, what, delay, self.user_id)
            except (Transient, *NETWORK) as exc:
                delay = min(self._backoff_max, 0.25 * 2**attempt) * random.uniform(0.5, 1.0)
                attempt += 1
                log.warning("%s failed (%s); retrying in %.1fs", what, self.redact(describe(exc)), delay)
            if await until(asyncio.sleep(delay, result=True), stop) is None:
                return None

    def redact(self, text: str) -> str:
        """``text`` with the password and the tokens replaced by ``***``."""
        for secret in (self._password, self._token, self._session_token):
            if secret:
                text = text.replace(secret, "***")
        return text


def describe(exc: BaseException) -> str:
    """An exception as its type and message, for a log line."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


async def until(awaitable: Awaitable[T], stop: asyncio.Event) -> T | None:
    """Awaits ``awaitable`` unless ``stop`` is set first (then cancels it and returns None)."""
    if stop.is_set():
        if asyncio.iscoroutine(awaitable):
            awaitable.close()
        return None
    task = asyncio.ensure_future(awaitable)
    stopper = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        stopper.cancel()
    if task.done():
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return None
