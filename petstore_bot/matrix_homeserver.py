"""The bot's account on its homeserver: one matrix-nio call per method, its errors sorted, and the retry around them.

A call's failure is either for good (:class:`MatrixError`: bad login, account deactivated; the bot stops) or worth
retrying (:class:`Transient`, and :class:`RateLimited` for a 429, waited out as the homeserver asks). An access token
the homeserver refuses (:class:`TokenRefused`: ``M_UNKNOWN_TOKEN``, revoked or expired, ``soft_logout`` or not) is
replaced by one password login on the same device, when the bot has its password, and the call is made again;
concurrent calls refused with the same token wait for that one login. :meth:`Homeserver.retry` runs a call until
it succeeds or ``stop`` is set, with capped exponential backoff. No message or log line carries the password or a
token (:meth:`Homeserver.redact`).
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
    "rate-limited by the homeserver (429) on %s; retrying in %.1fs. Exempt the bot from the message limit: Synapse's"
    ' admin API POST /_synapse/admin/v1/users/%s/override_ratelimit with {"messages_per_second": 0, "burst_count": 0}'
)
#: A 429 on a login: Synapse's login limit (``rc_login``), which no per-user override lifts.
LOGIN_LIMITED = (
    "login rate-limited by the homeserver (429, Synapse's rc_login: per address and per account; override_ratelimit"
    " does not lift it); retrying in %.1fs. The bot keeps its access token in its state_dir and logs in with its"
    " password only when that token is refused: keep state_dir across restarts"
)


class MatrixError(Exception):
    """The homeserver refused the bot for good (bad login, token revoked). Never carries a secret."""


class TokenRefused(MatrixError):
    """``M_UNKNOWN_TOKEN``: the access token was revoked or has expired; a password login replaces it."""


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
        remember: Callable[[AsyncClient], None] = lambda _client: None,
    ) -> None:
        """``remember(client)`` is called after each password login: the client's device and new token to keep."""
        self.url = url
        self.user_id = user_id
        self._password = password
        self._token = access_token
        self._session_token: str | None = None
        self._crypto = crypto
        self._backoff_max = backoff_max
        self._remember = remember
        #: The client logged in last (a refused token is replaced on it), how many logins it had, one at a time.
        self._client: AsyncClient | None = None
        self._logins = 0
        self._logging_in = asyncio.Lock()

    async def log_in(self, client: AsyncClient, *, kept_token: str | None = None) -> None:
        """Logs ``client`` in: with the configured access token (its device from whoami), else with the token kept
        from an earlier password login (``kept_token``), else, or when that one is refused, with the password on the
        client's device."""
        self._client = client
        if self._token is not None:
            await self._restore(client, self._token)
            return
        if kept_token is not None:
            self._session_token = kept_token  # redacted from here on
            try:
                await self._restore(client, kept_token)
                return
            except TokenRefused:
                log.info("the kept access token of %s was refused; logging in with the password", self.user_id)
                await self._password_login(client, replacing=True)
                return
        await self._password_login(client)

    async def _restore(self, client: AsyncClient, token: str) -> None:
        """``client`` on ``token`` (whoami first: the token's device), once the homeserver accepts it."""
        client.user_id, client.access_token = self.user_id, token
        who = await client.whoami()
        if not isinstance(who, WhoamiResponse):
            raise self.error("login", who)
        client.restore_login(user_id=self.user_id, device_id=who.device_id or "", access_token=token)
        self._logins += 1

    async def _password_login(self, client: AsyncClient, *, replacing: bool = False) -> None:
        """A password login on the client's device (the one kept on disk, when there is one); ``replacing`` a
        refused token, whose logout may have deleted the device's keys: they are published again."""
        response = await client.login(password=self._password, device_name="petstore bot")
        if not isinstance(response, LoginResponse):
            raise self.error("login", response)
        self._session_token = response.access_token
        self._logins += 1
        if replacing:
            self._crypto.republish(client)
        self._remember(client)

    async def _log_in_again(self, *, logins: int, stop: asyncio.Event) -> bool:
        """The token was refused to a call made after login number ``logins``: one password login replaces it
        (unless another call's did already). False when the bot has no password or ``stop`` came first."""
        async with self._logging_in:
            if self._logins != logins:
                return True
            client = self._client
            if self._password is None or self._token is not None or client is None:
                return False
            log.warning("the access token of %s was refused; logging in again with the password", self.user_id)
            return await self.retry(lambda: self._logged_in(client), stop=stop, what="login") is not None

    async def _logged_in(self, client: AsyncClient) -> bool:
        await self._password_login(client, replacing=True)
        return True

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
        if code in FATAL and code != "M_UNKNOWN_TOKEN":  # e.g. no longer in the room: give this reply up
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
        if code == "M_UNKNOWN_TOKEN":
            return TokenRefused(text)
        return MatrixError(text) if code in FATAL else Transient(text)

    async def retry(
        self, call: Callable[[], Awaitable[T]], *, stop: asyncio.Event, what: str, race_call: bool = True
    ) -> T | None:
        """``call()`` until it succeeds, with capped exponential backoff; None when ``stop`` ends the wait.

        ``race_call=False``: a call already started is not abandoned when ``stop`` comes (a send that must
        either go out or be known not to). A refused token is replaced (:meth:`_log_in_again`) and the call made
        again at once."""
        backoff = Backoff(most=self._backoff_max)
        while True:
            logins = self._logins
            try:
                result = await (until(call(), stop) if race_call else call())
                return None if result is None and stop.is_set() else result
            except TokenRefused:
                if not await self._log_in_again(logins=logins, stop=stop):
                    if stop.is_set():
                        return None
                    raise
                delay = 0.0  # the call again at once, on the new token
            except (Transient, *NETWORK) as exc:
                delay = self._wait_after(exc, backoff=backoff, what=what)
            if await until(asyncio.sleep(delay, result=True), stop) is None:
                return None

    def _wait_after(self, exc: Exception, *, backoff: Backoff, what: str) -> float:
        """The seconds to wait before ``what`` is tried again after it failed with ``exc`` (logged): what a 429 asks
        for, else the next step of ``backoff``."""
        if isinstance(exc, RateLimited):
            if what == "login":
                log.warning(LOGIN_LIMITED, exc.retry_after)
            else:
                log.warning(RATE_LIMITED, what, exc.retry_after, self.user_id)
            return exc.retry_after
        delay = backoff.next()
        log.warning("%s failed (%s); retrying in %.1fs", what, self.redact(describe(exc)), delay)
        return delay

    def redact(self, text: str) -> str:
        """``text`` with the password and the tokens replaced by ``***``."""
        for secret in (self._password, self._token, self._session_token):
            if secret:
                text = text.replace(secret, "***")
        return text


class Backoff:
    """The waits between the failures of one retried call: 0.25s doubled after each, capped at ``most`` seconds,
    each jittered down by up to half (replicas and restarts do not retry in step)."""

    def __init__(self, *, most: float) -> None:
        self._most = most
        self._failures = 0

    def next(self) -> float:
        """The wait after one more failure."""
        delay = min(self._most, 0.25 * 2.0**self._failures) * random.uniform(0.5, 1.0)
        self._failures = min(self._failures + 1, 64)  # 2.0**64 is past any cap; 2.0**1024 would overflow
        return delay


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
