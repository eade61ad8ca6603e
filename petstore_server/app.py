"""The Pet Store ASGI app (a Starlette router), serving the spec under ``/v1``.

Starlette's router and nothing around it: each endpoint is a bare ASGI callable that turns every failure into an
Error body ``{code, message, status}`` itself (an unknown path and a method not allowed too), so the exception and
error middleware a ``Starlette`` application wraps around its router would only cost each request two more layers
(about 7 % of the service's CPU a request, measured). Headers are read from the raw scope, pages come from the
store already rendered as JSON, constant headers are precomputed; nothing escapes as a traceback.

The app is written against the :class:`~.storage.Store` protocol (SQLite or
PostgreSQL). Links it sends are relative references, resolved against the URL
the client asked for, so they stay right behind a proxy that rewrites ``Host``
or mounts the service under a path prefix.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
from collections.abc import Awaitable, Callable, Sequence

from starlette.routing import Route, Router
from starlette.types import ASGIApp, Receive, Scope, Send

from .openapi import DOCUMENT
from .records import Idempotency, IdempotencyConflict, StoreUnavailable
from .sqlite_store import SqliteStore
from .storage import Store
from .store import PetStore
from .wire import (
    ApiError,
    decode_cursor,
    dumps,
    encode_cursor,
    error_body,
    fingerprint,
    parse_limit,
    parse_new_pet,
    parse_pet_id,
    parse_query,
    parse_status,
)

__all__ = ["DEFAULT_MAX_BODY_BYTES", "RETRY_AFTER_SECONDS", "create_app", "key_scope"]

logger = logging.getLogger("petstore_server")

DEFAULT_MAX_BODY_BYTES = 16384
Headers = list[tuple[bytes, bytes]]
Reply = tuple[int, bytes, Headers]
Handler = Callable[[Scope, Receive], Awaitable[Reply]]

_JSON = (b"content-type", b"application/json")
#: Sent with every successful getPet (RFC 9745 Deprecation, RFC 8594 Sunset, successor Link).
_DEPRECATION: Headers = [
    (b"deprecation", b"@1735689600"),
    (b"sunset", b"Thu, 05 Dec 2030 00:00:00 GMT"),
    (b"link", b'<../pets>; rel="successor-version"'),
]
_UNAUTHORIZED = {"WWW-Authenticate": "Bearer"}
_REPLAYED: Headers = [(b"idempotent-replayed", b"true")]
_LIST_PARAMS = ("limit", "status", "cursor")
_HEALTHY = b'{"status":"ok"}'
#: Seconds a client should wait before trying again while the database does not answer.
RETRY_AFTER_SECONDS = 1
_UNAVAILABLE = {"Retry-After": str(RETRY_AFTER_SECONDS)}


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None


def _error_reply(status: int, message: str, headers: dict[str, str] | None = None) -> Reply:
    raw = [(name.lower().encode(), value.encode()) for name, value in (headers or {}).items()]
    return status, error_body(status, message), raw


async def _send_reply(send: Send, status: int, body: bytes, headers: Headers) -> None:
    """``body`` as JSON with ``headers``: the two ASGI messages of a whole answer."""
    headers += (_JSON, (b"content-length", b"%d" % len(body)))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _Endpoint:
    """An ASGI app around a handler for ``methods``: ApiError becomes its Error reply, another method a 405, anything
    else a 500."""

    __slots__ = ("_allow", "_handler", "_methods")

    def __init__(self, handler: Handler, *, methods: Sequence[str]) -> None:
        self._handler = handler
        self._methods = frozenset(methods) | ({"HEAD"} if "GET" in methods else set())
        self._allow = ", ".join(sorted(self._methods))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            if scope["method"] not in self._methods:
                message = f"method {scope['method'][:20]} is not allowed here; allowed: {self._allow}"
                raise ApiError(405, message, headers={"Allow": self._allow})
            status, body, headers = await self._handler(scope, receive)
        except ApiError as exc:
            status, body, headers = _error_reply(exc.status, exc.message, exc.headers)
        except StoreUnavailable as exc:
            logger.warning("%s %s: the database does not answer: %s", scope["method"], scope["path"], exc)
            status, body, headers = _error_reply(503, "the database does not answer; try again shortly", _UNAVAILABLE)
        except Exception:
            logger.exception("internal error on %s %s", scope["method"], scope["path"])
            status, body, headers = _error_reply(500, "internal error; the service logged the details")
        await _send_reply(send, status, body, headers)


class _Service:
    """The operations, bound to one store and one set of API keys."""

    def __init__(self, store: Store, *, api_keys: Sequence[str], max_body_bytes: int) -> None:
        if not api_keys or not all(isinstance(key, str) and key for key in api_keys):
            raise ValueError("create_app needs at least one non-empty API key")
        self._store = store
        self._key_digests = tuple(hashlib.sha256(key.encode()).digest() for key in api_keys)
        self._key_scopes = tuple(key_scope(key) for key in api_keys)
        self._max_body = max_body_bytes

    def _check_auth(self, scope: Scope) -> int:
        """Constant-time check of the bearer token against every key; the index of the key it is."""
        value = _header(scope, b"authorization")
        if value is None or value[:7].lower() != b"bearer ":
            message = "missing bearer token: send 'Authorization: Bearer <API key>'"
            raise ApiError(401, message, headers=_UNAUTHORIZED)
        digest = hashlib.sha256(value[7:].strip()).digest()
        found = -1
        for index, known in enumerate(self._key_digests):
            if hmac.compare_digest(digest, known):
                found = index
        if found < 0:
            raise ApiError(401, "invalid API key", headers=_UNAUTHORIZED)
        return found

    async def pets(self, scope: Scope, receive: Receive) -> Reply:
        """listPets (GET, HEAD) and createPet (POST)."""
        caller = self._check_auth(scope)
        if scope["method"] == "POST":
            return await self._create(scope, receive, owner=self._key_scopes[caller])
        params = parse_query(scope["query_string"], _LIST_PARAMS)
        limit = parse_limit(params.get("limit"))
        status = parse_status(params.get("status"))
        after_id = decode_cursor(params.get("cursor"))
        page = await self._store.list_page(limit=limit, status=status, after_id=after_id)
        if page.next_after is None:
            return 200, page.body, []
        return 200, page.body, [(b"link", _next_link(limit=limit, status=status, after=page.next_after))]

    async def _create(self, scope: Scope, receive: Receive, *, owner: str) -> Reply:
        """createPet; an Idempotency-Key is ``owner``'s (the calling API key's scope) alone."""
        parse_query(scope["query_string"], ())
        key = _idempotency_key(scope)
        body = await self._read_body(scope, receive)
        if not body:
            raise ApiError(400, "request body is required: a NewPet JSON object")
        if not _is_json(_header(scope, b"content-type")):
            raise ApiError(415, "Content-Type must be application/json")
        new_pet = parse_new_pet(body)
        idempotency = None if key is None else Idempotency(key=key, fingerprint=fingerprint(new_pet), scope=owner)
        try:
            created = await self._store.create_pet(
                name=new_pet["name"],
                category_id=new_pet["category_id"],
                status=new_pet["status"],
                idempotency=idempotency,
            )
        except IdempotencyConflict:
            raise ApiError(422, "Idempotency-Key was already used with a different request body") from None
        return created.status_code, created.body, list(_REPLAYED) if created.replayed else []

    async def _read_body(self, scope: Scope, receive: Receive) -> bytes:
        too_large = ApiError(413, f"request body is over {self._max_body} bytes")
        declared = _header(scope, b"content-length")
        if declared is not None and declared.isdigit() and (len(declared) > 12 or int(declared) > self._max_body):
            raise too_large
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                raise ApiError(400, "request body is incomplete: the client disconnected")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self._max_body:
                raise too_large
            chunks.append(chunk)
            more = message.get("more_body", False)
        return b"".join(chunks)

    async def pet(self, scope: Scope, receive: Receive) -> Reply:
        """getPet (deprecated): a petId that is not an int64 names no pet, so 404."""
        self._check_auth(scope)
        parse_query(scope["query_string"], ())
        raw_id = scope["path_params"]["petId"]
        pet_id = parse_pet_id(raw_id)
        pet = None if pet_id is None else await self._store.get_pet(pet_id=pet_id)
        if pet is None:
            raise ApiError(404, f"no pet with id {raw_id[:40]!r}")
        return 200, pet.json(), list(_DEPRECATION)

    async def orders(self, scope: Scope, receive: Receive) -> Reply:
        """The orders listing: always an empty array, since no operation creates orders."""
        self._check_auth(scope)
        parse_query(scope["query_string"], ())
        return 200, await self._store.list_orders(), []

    async def ready(self, scope: Scope, receive: Receive) -> Reply:
        """Readiness (``/readyz``, and ``/healthz``): 200 when the database answers, else 503. No key needed."""
        parse_query(scope["query_string"], ())
        try:
            await self._store.health_check()
        except StoreUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 -- any failure of the check is "not ready", said in one line
            logger.warning("health check failed: %s", " ".join(str(exc).split()) or type(exc).__name__)
            raise StoreUnavailable(type(exc).__name__) from None
        return 200, _HEALTHY, []


async def _alive(scope: Scope, receive: Receive) -> Reply:
    """Liveness (``/livez``): 200 while the process serves requests, whatever the database does."""
    parse_query(scope["query_string"], ())
    return 200, _HEALTHY, []


#: Keeps what idempotency records store of an API key apart from any other digest of it.
_SCOPE_LABEL = b"petstore idempotency scope\x00"


def key_scope(api_key: str) -> str:
    """What an idempotency record keeps of the API key that made it: a digest that tells keys apart and cannot
    give the key back (SHA-256, labelled, 128 bits), the same in every worker and on every host."""
    return hashlib.sha256(_SCOPE_LABEL + api_key.encode()).hexdigest()[:32]


def _idempotency_key(scope: Scope) -> str | None:
    raw = _header(scope, b"idempotency-key")
    if raw is None:
        return None
    if 0 < len(raw) <= 255 and all(0x21 <= byte <= 0x7E for byte in raw):
        return raw.decode("ascii")
    raise ApiError(400, "Idempotency-Key must be 1 to 255 visible ASCII characters")


def _is_json(content_type: bytes | None) -> bool:
    return content_type is not None and content_type.split(b";", 1)[0].strip().lower() == b"application/json"


def _next_link(*, limit: int, status: str | None, after: int) -> bytes:
    """``Link`` to the next page as a query-only relative reference (RFC 3986 section 5.2.2).

    It resolves against the URL the client requested, whatever host, scheme and path
    prefix a proxy put in front: nothing here trusts ``Host`` or ``X-Forwarded-*``.
    """
    query = f"limit={limit}" + (f"&status={status}" if status else "") + f"&cursor={encode_cursor(after)}"
    return f'<?{query}>; rel="next"'.encode()


def _openapi_endpoint() -> Handler:
    """The OpenAPI document, rendered once; served without authentication."""
    body = dumps(DOCUMENT)

    async def openapi(scope: Scope, receive: Receive) -> Reply:
        return 200, body, []

    return openapi


async def _not_found(scope: Scope, receive: Receive, send: Send) -> None:
    """The router's answer to a path that no route matches."""
    if scope["type"] != "http":  # the service is HTTP only; a lifespan is its server's (ServedApp's) business
        return
    await _send_reply(send, *_error_reply(404, "no such resource; the API lives under /v1"))


class _App:
    """The router, and a 500 Error body for a failure the endpoints did not answer (a scope the router cannot
    route); the failure is then raised on, for the server to log as Starlette's own error middleware does."""

    __slots__ = ("_router",)

    def __init__(self, router: Router) -> None:
        self._router = router

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self._router(scope, receive, send)
        except Exception:
            if scope.get("type") == "http":
                # refused by the server if an answer had begun (a failure of ``send`` itself): that one stands
                with contextlib.suppress(Exception):
                    await _send_reply(send, *_error_reply(500, "internal error; the service logged the details"))
            raise


def create_app(
    store: Store | PetStore, *, api_keys: Sequence[str], max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
) -> ASGIApp:
    """The Pet Store app over ``store``, accepting any of ``api_keys`` as bearer token.

    A synchronous :class:`PetStore` (as callers outside the service pass) is served through
    :class:`SqliteStore`, off the event loop; the caller still owns and closes it.
    """
    if isinstance(store, PetStore):
        store = SqliteStore(store)
    service = _Service(store, api_keys=api_keys, max_body_bytes=max_body_bytes)
    get = ("GET",)
    routes = [
        Route("/v1/pets", _Endpoint(service.pets, methods=("GET", "POST"))),
        Route("/v1/pets/{petId}", _Endpoint(service.pet, methods=get)),
        Route("/v1/store/orders", _Endpoint(service.orders, methods=get)),
        Route("/v1/healthz", _Endpoint(service.ready, methods=get)),
        Route("/v1/readyz", _Endpoint(service.ready, methods=get)),
        Route("/v1/livez", _Endpoint(_alive, methods=get)),
        Route("/v1/openapi.json", _Endpoint(_openapi_endpoint(), methods=get)),
    ]
    return _App(Router(routes=routes, redirect_slashes=False, default=_not_found))
