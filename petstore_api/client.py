"""The async Pet Store client (spec sections 4 and 5).

::

    async with PetStoreClient(base_url="https://pets.example/v1", api_key=key) as client:
        page = await client.list_pets(limit=10, status="available")
        async for page in client.iter_pages(limit=50):
            ...

Every method raises only :mod:`petstore_api.errors` exceptions (InputError
before sending; APIError, TransportError or ProtocolError after). The API key
is a ``SecretStr``: it is sent as ``Authorization: Bearer <key>`` to the base
URL's origin only, and never appears in a repr, a log record or an exception.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import AsyncGenerator, Mapping, Sequence
from functools import cached_property, lru_cache, partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin
from urllib.request import getproxies

from pydantic import SecretStr

from ._decode import api_error, read_json, read_pet, read_pets
from ._inputs import build_new_pet, check_idempotency_key, check_limit, check_pet_id, check_status
from .deprecation import notice_from_headers
from .errors import ConfigError, ProtocolError
from .events import EventHook
from .links import link_target
from .masking import mask_secret
from .models import CreatedPet, NewPet, PetPage, PetStatus, PetWithNotice
from .policy import MAX_RESPONSE_BYTES, RetryPolicy, Timeouts
from .urls import PetStoreWarning, check_base_url, check_key_transport, parse_base_url, same_origin
from .version import __version__

if TYPE_CHECKING:  # pragma: no cover
    import httpx

    from ._http import Reply, Sender

__all__ = ["PetStoreClient", "Timeouts", "RetryPolicy", "PetStoreWarning", "USER_AGENT", "asgi_transport", "load_wire"]

logger = logging.getLogger("petstore_api")

USER_AGENT = f"petstore/{__version__}"


def _as_secret(api_key: SecretStr | str | None) -> SecretStr | None:
    """The key as a SecretStr (surrounding whitespace dropped); None when empty."""
    if api_key is None:
        return None
    if not isinstance(api_key, SecretStr | str):
        raise ConfigError(f"API key must be a string, got {type(api_key).__name__}")
    value = (api_key.get_secret_value() if isinstance(api_key, SecretStr) else api_key).strip()
    if not value:
        return None
    if not value.isascii() or not value.isprintable() or any(c.isspace() for c in value):
        raise ConfigError("API key holds characters that cannot go in an HTTP header (spaces, control or non-ASCII)")
    return SecretStr(value)


#: ``urljoin``, remembered for the last 64 (page URL, link target) pairs: a client listing the same
#: page is sent the same relative ``rel="next"`` target each time.
@lru_cache(maxsize=64)
def _join(base: str, target: str) -> str:
    return urljoin(base, target)


def _resolve(base: httpx.URL, target: str) -> str | None:
    """``target`` (a link target) resolved against ``base``; None when it is not a URL."""
    import httpx

    try:
        return str(base.join(target.strip()))
    except (httpx.InvalidURL, TypeError, ValueError):
        return None


def _tls_verify(base: httpx.URL, transport: object) -> ssl.SSLContext | bool:
    """httpx's ``verify`` for a client bound to ``base``.

    A client on an ``http://`` origin with no proxy in the environment never shakes
    hands over TLS (redirects are not followed and only same-origin URLs are sent),
    so it skips loading the system's CA bundle and gets a
    verifying context without CAs: were it ever used, verification would fail.
    """
    if transport is not None or base.scheme != "http" or getproxies():
        return True
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


class PetStoreClient:
    """One ``httpx.AsyncClient`` per object; use as ``async with PetStoreClient(...) as c``.

    Made, it has checked its base URL and key; httpx and its connection stack load at its first call (a bot
    before its first command, a face that only shows its settings, never load them).

    ``transport`` is any httpx async transport (``httpx.ASGITransport`` for the
    embedded service, ``httpx.MockTransport`` in tests). ``timeouts`` and
    ``retry`` default to ``Timeouts()`` and ``RetryPolicy()``. ``event_hooks``
    are told of attempts, retries and exchanges (:mod:`petstore_api.events`).
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_key: SecretStr | str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        timeouts: Timeouts | None = None,
        retry: RetryPolicy | None = None,
        allow_insecure_http: bool = False,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        event_hooks: Sequence[EventHook] = (),
    ) -> None:
        self._key = _as_secret(api_key)
        self._allow_insecure_http = allow_insecure_http
        self._checked_url = check_base_url(
            base_url, has_key=self._key is not None, allow_insecure_http=allow_insecure_http
        )
        self.timeouts = timeouts if timeouts is not None else Timeouts()
        self.retry = retry if retry is not None else RetryPolicy()
        if not isinstance(self.timeouts, Timeouts) or not isinstance(self.retry, RetryPolicy):
            raise TypeError("timeouts must be a Timeouts and retry a RetryPolicy")
        self._transport = transport
        self._max_response_bytes = max_response_bytes
        self._hooks: list[EventHook] = list(event_hooks)
        #: The connection pool and its sender, made at the first call (:meth:`_connected`).
        self._pool: tuple[httpx.AsyncClient, Sender] | None = None
        self._closed = False
        self._urls: dict[tuple[str, tuple[tuple[str, str], ...]], httpx.URL] = {}

    # -- lifecycle ---------------------------------------------------------

    async def __aenter__(self) -> PetStoreClient:
        self._check_open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool; the client cannot be used afterwards."""
        if not self._closed:
            self._closed = True
            if self._pool is not None:
                await self._pool[0].aclose()

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this PetStoreClient is closed")

    @cached_property
    def _base(self) -> httpx.URL:
        """The base URL as httpx's URL."""
        return parse_base_url(self._checked_url)

    def _connected(self) -> tuple[httpx.AsyncClient, Sender]:
        """The connection pool and the sender on it, made on first use: a process that never calls the service
        (a bot before its first command) loads no connection stack (httpcore) and no CA bundle."""
        if self._pool is None:
            import httpx

            from ._http import BearerAuth, Sender

            if self._key is not None:  # the key goes where httpx connects: its reading of the URL is checked too
                check_key_transport(self._base, allow_insecure_http=self._allow_insecure_http)
            auth = BearerAuth(self._key, origin_url=self._base) if self._key else None
            http = httpx.AsyncClient(
                transport=self._transport,
                verify=_tls_verify(self._base, self._transport),
                auth=auth,
                timeout=self.timeouts.to_httpx(),
                headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
                follow_redirects=False,
            )
            sender = Sender(
                client=http,
                timeouts=self.timeouts,
                retry=self.retry,
                scrub=self._scrub,
                max_bytes=self._max_response_bytes,
                hooks=self._hooks,
            )
            self._pool = (http, sender)
        return self._pool

    @property
    def _http(self) -> httpx.AsyncClient:
        """The ``httpx.AsyncClient`` this client sends on."""
        return self._connected()[0]

    # -- events ------------------------------------------------------------

    def add_event_hook(self, hook: EventHook) -> None:
        """Tell ``hook`` every :mod:`petstore_api.events` event from now on (attempts, retries, exchanges)."""
        if hook not in self._hooks:
            self._hooks.append(hook)

    def remove_event_hook(self, hook: EventHook) -> None:
        """Stop telling ``hook`` (nothing happens when it was not added)."""
        if hook in self._hooks:
            self._hooks.remove(hook)

    # -- identity ----------------------------------------------------------

    @property
    def base_url(self) -> str:
        return str(self._base)

    @property
    def has_api_key(self) -> bool:
        return self._key is not None

    @property
    def masked_api_key(self) -> str:
        return mask_secret(self._key)

    def set_api_key(self, api_key: SecretStr | str) -> None:
        """Send ``api_key`` from now on (e.g. after a 401). Same checks as the constructor."""
        key = _as_secret(api_key)
        if key is None:
            raise ConfigError("the API key is empty")
        check_key_transport(self._checked_url, allow_insecure_http=self._allow_insecure_http)
        if self._pool is not None:
            check_key_transport(self._base, allow_insecure_http=self._allow_insecure_http)
        self._key = key
        if self._pool is not None:
            from ._http import BearerAuth

            self._pool[0].auth = BearerAuth(key, origin_url=self._base)

    def __repr__(self) -> str:
        return f"PetStoreClient(base_url={self.base_url!r}, api_key={self.masked_api_key!r})"

    def _scrub(self, text: str) -> str:
        """``text`` with any occurrence of the key replaced by its masked form."""
        if self._key is None:
            return text
        return text.replace(self._key.get_secret_value(), self.masked_api_key)

    # -- operations --------------------------------------------------------

    async def list_pets(self, *, limit: int | None = None, status: PetStatus | str | None = None) -> PetPage:
        """``listPets``: one page; ``page.next_url`` is set when the service offers more."""
        return await self._fetch_page(self._pets_url(limit=limit, status=status), label="GET /pets")

    async def next_page(self, page: PetPage) -> PetPage | None:
        """The page after ``page`` (None on the last page); only on the base URL's origin."""
        if page.next_url is None:
            return None
        import httpx

        from ._http import host_label

        label = "GET /pets (next page)"
        try:
            url = httpx.URL(page.next_url)
        except (httpx.InvalidURL, TypeError, ValueError):
            raise ProtocolError(f"{label}: the next-page link is not a valid URL") from None
        if not same_origin(url, self._base):
            raise ProtocolError(
                f"{label}: the next-page link points to another origin ({host_label(url)}); "
                "refused to send the API key there"
            )
        return await self._fetch_page(url, label=label)

    async def iter_pages(
        self, *, limit: int | None = None, status: PetStatus | str | None = None
    ) -> AsyncGenerator[PetPage, None]:
        """Every page of ``listPets``, following ``Link: rel="next"``; stops on a link loop."""
        first = self._pets_url(limit=limit, status=status)
        page: PetPage | None = await self._fetch_page(first, label="GET /pets")
        seen = {str(first)}
        count = 0
        while page is not None:
            count += 1
            yield page
            if page.next_url in seen:
                raise ProtocolError(f"GET /pets: the next-page link repeats an earlier page after {count} pages")
            if page.next_url is not None:
                seen.add(page.next_url)
            page = await self.next_page(page)

    async def create_pet(
        self,
        pet: NewPet | None = None,
        *,
        name: str | None = None,
        category_id: int | None = None,
        status: PetStatus | str | None = None,
        idempotency_key: str | None = None,
    ) -> CreatedPet:
        """``createPet``: the pet as stored, and whether the service replayed it for an earlier request under the same
        ``Idempotency-Key`` (``Idempotent-Replayed: true``). Retried only under that key."""
        new = build_new_pet(pet, name=name, category_id=category_id, status=status)
        headers = {"Idempotency-Key": check_idempotency_key(idempotency_key)}
        label = "POST /pets"
        reply = await self._call("POST", self._url("/pets"), label=label, json=new.to_wire(), headers=headers)
        replayed = reply.headers.get("idempotent-replayed", "").strip().lower() == "true"
        return CreatedPet(pet=read_pet(reply, label=label)[0], replayed=replayed)

    async def get_pet(self, pet_id: int) -> PetWithNotice:
        """``getPet`` (deprecated): the pet with a structured deprecation notice."""
        pet_id = check_pet_id(pet_id)
        label = f"GET /pets/{pet_id}"
        reply = await self._call("GET", self._url(f"/pets/{pet_id}"), label=label)
        pet, raw = read_pet(reply, label=label)
        notice = notice_from_headers(
            reply.headers, links=reply.links, operation="getPet", resolve=partial(_resolve, reply.url)
        )
        return PetWithNotice(pet=pet, notice=notice, raw=raw)

    async def list_orders(self) -> Any:
        """``GET /store/orders`` as plain JSON (the spec does not show its payload)."""
        label = "GET /store/orders"
        reply = await self._call("GET", self._url("/store/orders"), label=label)
        return read_json(reply, label=label, expected="a JSON value")

    # -- plumbing ----------------------------------------------------------

    def _url(self, path: str, params: Mapping[str, str] | None = None) -> httpx.URL:
        """The URL of ``path`` under the base URL; built once per (path, params), as parsing costs."""
        key = (path, tuple(sorted(params.items())) if params else ())
        url = self._urls.get(key)
        if url is None:
            url = self._base.copy_with(path=self._base.path.rstrip("/") + path)
            url = url.copy_merge_params(params) if params else url
            if len(self._urls) < 512:  # bounded: ids and filters vary
                self._urls[key] = url
        return url

    def _pets_url(self, *, limit: Any, status: Any) -> httpx.URL:
        checked_limit, checked_status = check_limit(limit), check_status(status)
        params: dict[str, str] = {}
        if checked_limit is not None:
            params["limit"] = str(checked_limit)
        if checked_status is not None:
            params["status"] = checked_status.value
        return self._url("/pets", params)

    async def _fetch_page(self, url: httpx.URL, *, label: str) -> PetPage:
        reply = await self._call("GET", url, label=label)
        pets, raw = read_pets(reply, label=label)
        return PetPage(pets=pets, next_url=self._next_url(reply, label=label), raw=raw)

    @staticmethod
    def _next_url(reply: Reply, *, label: str) -> str | None:
        """The ``rel="next"`` target made absolute (checked, as a URL, when it is followed)."""
        target = link_target(reply.links, "next")
        if target is None:
            return None
        target = target.strip()
        if target.startswith(("https://", "http://")):  # already absolute (as petstore serve sends it)
            return target
        try:
            return _join(str(reply.url), target)
        except ValueError:
            raise ProtocolError(f"{label}: the next-page link is not a valid URL") from None

    async def _call(
        self, method: str, url: httpx.URL, *, label: str, json: Any = None, headers: Mapping[str, str] | None = None
    ) -> Reply:
        """Send and return a 2xx reply; raise the matching error for anything else."""
        from ._http import Call

        self._check_open()
        reply = await self._connected()[1].send(Call(method=method, url=url, label=label, json=json, headers=headers))
        if 200 <= reply.status < 300:
            return reply
        if reply.status < 400:
            where = reply.headers.get("location", "")
            to = f" to {self._scrub(where[:200])}" if where else ""
            raise ProtocolError(f"{label}: unexpected HTTP {reply.status}{to}; check the base URL")
        raise api_error(reply, label=label, scrub=self._scrub)


def load_wire() -> None:
    """Import what a client's first call needs (httpx and the sender) now: for a one-shot command, whose modules are
    all imported before it starts (:mod:`petstore_cli.startup`), rather than at its first call."""
    from ._http import Sender  # noqa: F401  (the module, and httpx with it)


def asgi_transport(app: Any) -> httpx.AsyncBaseTransport:
    """A ``transport=`` that calls an ASGI ``app`` in this process (the sandbox) instead of the network."""
    import httpx

    return httpx.ASGITransport(app=app)
