"""Sending one call: deadline, attempts, backoff, size cap and transport errors.

A *call* is everything one client method does on the wire: one or more
attempts plus the sleeps between them, all inside ``Timeouts.total``.

Retry rules (docs/client.md says them to users):

* A call is *idempotent* when it is a GET or carries an ``Idempotency-Key``.
* Idempotent calls are retried after connection failures, timeouts and broken
  connections, and after 429/502/503/504, waiting ``Retry-After`` when the
  service sent one (up to ``retry_after_cap``; a longer one ends the call
  with the service's error) else exponential backoff with full jitter.
* Other calls are retried only when the request never left (connect failed).
* Nothing is retried past the attempt budget or past the total deadline.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
import time
from collections.abc import Callable, Generator, Mapping
from functools import partial
from typing import Any

import httpx
from pydantic import SecretStr

import petstore_api.errors as errors
from petstore_os.records import field, record

from .events import SECRET_HEADERS, AttemptStarted, EventHook, Exchange, Retrying
from .links import Links
from .masking import mask_secret
from .policy import MAX_RESPONSE_BYTES, RETRY_STATUSES, RetryPolicy, Timeouts, parse_retry_after
from .urls import origin

__all__ = ["MAX_RESPONSE_BYTES", "BearerAuth", "Call", "Reply", "Sender", "host_label"]

logger = logging.getLogger("petstore_api")

Scrub = Callable[[str], str]


class BearerAuth(httpx.Auth):
    """``Authorization: Bearer <key>``, added only for requests to ``origin_url``'s origin."""

    def __init__(self, key: SecretStr, *, origin_url: httpx.URL) -> None:
        self._key = key
        self._origin = origin(origin_url)

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        if origin(request.url) == self._origin:
            request.headers["Authorization"] = f"Bearer {self._key.get_secret_value()}"
        yield request

    def __repr__(self) -> str:
        return "BearerAuth(key='**********')"


@record
class Call:
    """One client operation on the wire. ``label`` is like ``GET /pets``."""

    method: str
    url: httpx.URL
    label: str
    json: Any = None
    headers: Mapping[str, str] | None = None

    @property
    def idempotent(self) -> bool:
        has_key = any(k.lower() == "idempotency-key" for k in (self.headers or {}))
        return self.method in {"GET", "HEAD", "OPTIONS"} or has_key


@record
class Reply:
    """A complete HTTP response: status, headers and the whole (capped) body."""

    status: int
    headers: httpx.Headers
    body: bytes
    url: httpx.URL
    #: The ``Link`` header as httpx parses it (``Response.links``): read with ``links.link_target``.
    links: Links = field(default_factory=dict)


@record
class _Failed:
    """An attempt without a usable response; ``sent``: the service may have seen it."""

    error: errors.PetStoreError
    sent: bool
    retryable: bool = True


def host_label(url: httpx.URL) -> str:
    """``host`` or ``host:port`` (``[::1]:8080`` for IPv6), never userinfo."""
    host = f"[{url.host}]" if ":" in url.host else url.host
    return f"{host}:{url.port}" if url.port else host


def _masked_header(name: str, value: str) -> str:
    """A secret header's value masked (``Bearer sk-...1234``: the scheme kept, the credential masked)."""
    scheme, _, credential = value.partition(" ")
    if credential and name.lower().endswith("authorization"):
        return f"{scheme} {mask_secret(credential)}"
    return mask_secret(value)


def _secs(value: float | None) -> str:
    return "unlimited" if value is None else f"{value:g} s"


_ERRNO_REASONS = {
    errno.ECONNREFUSED: "connection refused",
    errno.ECONNRESET: "connection reset",
    errno.ENETUNREACH: "network unreachable",
    errno.EHOSTUNREACH: "host unreachable",
}
_REASONS = (
    ("refused", "connection refused"),
    ("name or service not known", "host name not found"),
    ("nodename nor servname", "host name not found"),
    ("name resolution", "host name not found"),
    ("getaddrinfo", "host name not found"),
    ("reset", "connection reset"),
    ("unreachable", "network unreachable"),
    ("certificate", "TLS certificate verification failed"),
    ("ssl", "TLS handshake failed"),
)


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and its causes (httpx wraps the OSError that says what really happened)."""
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(found) < 8 and current not in found:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def _reason(exc: BaseException, scrub: Scrub) -> str:
    """A short cause in plain words: 'connection refused', 'host name not found', ..."""
    chain = _chain(exc)
    for link in chain:
        if isinstance(link, socket.gaierror):
            return "host name not found"
        if isinstance(link, OSError) and link.errno in _ERRNO_REASONS:
            return _ERRNO_REASONS[link.errno]
    for link in chain:
        lowered = str(link).lower()
        for needle, reason in _REASONS:
            if needle in lowered:
                return reason
    text = str(exc).strip()
    first = text.splitlines()[0][:120] if text else ""
    return scrub(first) or type(exc).__name__


class Sender:
    """Runs calls over one ``httpx.AsyncClient`` under a deadline and a retry policy."""

    def __init__(
        self,
        *,
        client: httpx.AsyncClient,
        timeouts: Timeouts,
        retry: RetryPolicy,
        scrub: Scrub,
        max_bytes: int = MAX_RESPONSE_BYTES,
        hooks: list[EventHook] | None = None,
    ) -> None:
        self._client = client
        self._timeouts = timeouts
        self._retry = retry
        self._scrub = scrub
        self._max_bytes = max_bytes
        #: The client's event hooks (the same list: hooks added later are told too).
        self.hooks: list[EventHook] = hooks if hooks is not None else []

    def _tell(self, make: Callable[[], AttemptStarted | Retrying | Exchange]) -> None:
        """Build the event only when someone listens; a failing hook never breaks the call."""
        if not self.hooks:
            return
        event = make()
        for hook in list(self.hooks):
            try:
                hook(event)
            except Exception:  # a listener's bug is not the call's failure (-v shows it)
                logger.debug("an event hook failed on %s", type(event).__name__, exc_info=True)

    async def send(self, call: Call) -> Reply:
        """The final reply (any status) after retries; raises for transport failures."""
        total = self._timeouts.total
        deadline = None if total is None else asyncio.get_running_loop().time() + total
        scope = asyncio.timeout_at(deadline)
        try:
            async with scope:
                return await self._attempts(call, deadline)
        except TimeoutError:  # the builtin, raised by the scope
            if not scope.expired():
                raise
            host = host_label(call.url)
            raise errors.TimeoutError(
                f"{call.label}: no complete answer from {host} within {_secs(total)} (total time limit)",
                host=host,
            ) from None

    async def _attempts(self, call: Call, deadline: float | None) -> Reply:
        attempt = 0
        while True:
            attempt += 1
            outcome = await self._attempt(call, attempt)
            wait = self._retry_wait(call, outcome, attempt)
            if wait is None or not self._fits(wait, deadline):
                if isinstance(outcome, _Failed):
                    raise outcome.error
                return outcome
            logger.debug("%s: retrying in %.2f s (attempt %d/%d)", call.label, wait, attempt + 1, self._retry.attempts)
            self._tell(partial(self._retrying, call, outcome, attempt + 1, wait))
            await self._retry.sleep(wait)

    def _retrying(self, call: Call, outcome: Reply | _Failed, attempt: int, wait: float) -> Retrying:
        reason = str(outcome.error) if isinstance(outcome, _Failed) else f"HTTP {outcome.status}"
        return Retrying(label=call.label, attempt=attempt, attempts=self._retry.attempts, wait=wait, reason=reason)

    @staticmethod
    def _fits(wait: float, deadline: float | None) -> bool:
        return deadline is None or asyncio.get_running_loop().time() + wait < deadline

    def _retry_wait(self, call: Call, outcome: Reply | _Failed, attempt: int) -> float | None:
        """Seconds to wait before the next attempt, or None to stop here."""
        if attempt >= self._retry.attempts:
            return None
        if isinstance(outcome, _Failed):
            if not outcome.retryable or (outcome.sent and not call.idempotent):
                return None
            return self._retry.backoff_delay(attempt)
        if outcome.status not in RETRY_STATUSES or not call.idempotent:
            return None
        after = parse_retry_after(outcome.headers.get("retry-after"))
        if after is None:
            return self._retry.backoff_delay(attempt)
        if after > self._retry.retry_after_cap:
            logger.debug(
                "%s: not retrying, Retry-After %g s exceeds the cap of %g s",
                call.label,
                after,
                self._retry.retry_after_cap,
            )
            return None
        return after

    async def _attempt(self, call: Call, attempt: int) -> Reply | _Failed:
        self._tell(partial(self._started, call, attempt))
        started = time.perf_counter()
        try:
            reply = await self._exchange(call, attempt)
        except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError) as exc:
            failed = self._map(exc, call)
            self._log(call, type(exc).__name__, started, attempt)
            return failed
        except errors.ProtocolError:  # the body went over the size cap
            self._log(call, "body over the size cap", started, attempt)
            raise
        except asyncio.CancelledError:  # the total deadline (or Ctrl-C) ended it: still one line for -v
            self._log(call, "no complete answer (cancelled)", started, attempt)
            raise
        self._log(call, f"{reply.status} ({len(reply.body)} bytes)", started, attempt)
        return reply

    def _log(self, call: Call, result: str, started: float, attempt: int) -> None:
        if not logger.isEnabledFor(logging.DEBUG):  # -v is off: no line to build
            return
        elapsed = (time.perf_counter() - started) * 1000
        where = f"{call.method} {host_label(call.url)}{call.url.raw_path.decode('ascii', 'replace')}"
        logger.debug("%s -> %s in %.1f ms (attempt %d/%d)", where, result, elapsed, attempt, self._retry.attempts)

    def _started(self, call: Call, attempt: int) -> AttemptStarted:
        url = self._scrub(str(call.url))
        return AttemptStarted(
            label=call.label, method=call.method, url=url, attempt=attempt, attempts=self._retry.attempts
        )

    async def _exchange(self, call: Call, attempt: int = 1) -> Reply:
        request = self._client.build_request(call.method, call.url, json=call.json, headers=call.headers)
        started = time.perf_counter()
        response = await self._client.send(request, stream=True)
        try:
            body = await self._read(response, call)
        finally:
            await response.aclose()
        elapsed = (time.perf_counter() - started) * 1000
        self._tell(partial(self._exchanged, call, response, body, elapsed, attempt))
        return Reply(
            status=response.status_code,
            headers=response.headers,
            links=response.links,
            body=body,
            url=request.url,
        )

    def _exchanged(self, call: Call, response: httpx.Response, body: bytes, elapsed: float, attempt: int) -> Exchange:
        request = response.request  # as sent: the auth flow's headers included
        return Exchange(
            label=call.label,
            method=request.method,
            url=self._scrub(str(request.url)),
            request_headers=self._shown_headers(request.headers),
            request_body=request.content,
            status=response.status_code,
            response_headers=self._shown_headers(response.headers),
            response_body=body,
            elapsed_ms=elapsed,
            attempt=attempt,
        )

    def _shown_headers(self, headers: httpx.Headers) -> tuple[tuple[str, str], ...]:
        """Headers as they may be shown: secret ones masked, and the key masked wherever it appears."""
        return tuple(
            (name, _masked_header(name, value) if name.lower() in SECRET_HEADERS else self._scrub(value))
            for name, value in headers.items()
        )

    async def _read(self, response: httpx.Response, call: Call) -> bytes:
        declared = response.headers.get("content-length", "")
        if declared.isascii() and declared.isdigit() and int(declared) > self._max_bytes:
            raise self._too_big(call)
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > self._max_bytes:
                raise self._too_big(call)
            chunks.append(chunk)
        return b"".join(chunks)

    def _too_big(self, call: Call) -> errors.ProtocolError:
        limit = f"{self._max_bytes / 2**20:g} MiB"
        return errors.ProtocolError(f"{call.label}: the response body is larger than {limit}; refused to read it")

    def _map(self, exc: BaseException, call: Call) -> _Failed:
        """An httpx exception as one of ours (never chained: requests hold headers)."""
        host = host_label(call.url)
        if isinstance(exc, httpx.TimeoutException):
            return self._map_timeout(exc, host)
        reason = _reason(exc, self._scrub)
        if isinstance(exc, httpx.ConnectError | httpx.ProxyError):
            return _Failed(errors.ConnectError(f"cannot connect to {host}: {reason}", host=host), sent=False)
        if isinstance(exc, httpx.DecodingError):
            message = f"{call.label}: the response body could not be decoded ({reason})"
            return _Failed(errors.ProtocolError(message), sent=True, retryable=False)
        if isinstance(exc, httpx.NetworkError | httpx.RemoteProtocolError):
            message = f"the connection to {host} broke off before the response was complete ({reason})"
            return _Failed(errors.TransportError(message, host=host), sent=True)
        message = f"{call.label}: the request to {host} failed ({type(exc).__name__}: {reason})"
        return _Failed(errors.TransportError(message, host=host), sent=True, retryable=False)

    def _map_timeout(self, exc: httpx.TimeoutException, host: str) -> _Failed:
        t = self._timeouts
        if isinstance(exc, httpx.ConnectTimeout):
            text, sent = f"cannot connect to {host} within {_secs(t.connect)} (connect timeout)", False
        elif isinstance(exc, httpx.PoolTimeout):
            text, sent = f"no free connection to {host} within {_secs(t.pool)} (pool timeout)", False
        elif isinstance(exc, httpx.WriteTimeout):
            text, sent = f"sending to {host} stalled for {_secs(t.write)} (write timeout)", True
        else:
            text, sent = f"{host} sent nothing for {_secs(t.read)} (read timeout)", True
        return _Failed(errors.TimeoutError(text, host=host), sent=sent)
