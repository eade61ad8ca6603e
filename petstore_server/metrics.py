"""Prometheus metrics of ``petstore serve``: ``GET /metrics`` on the service's own port, in the text format.

Counted per request: ``petstore_http_requests_total`` (by route template, method and status) and
``petstore_http_request_duration_seconds`` (a histogram by route); ``petstore_pets_created_total`` and
``petstore_idempotent_replays_total`` (a create answered 201 with or without ``Idempotent-Replayed``); and, on
PostgreSQL, ``petstore_db_pool_connections_in_use`` and ``petstore_db_pool_requests_waiting`` (refreshed every
second and at each scrape).

With several workers, prometheus-client's multiprocess mode sums them across workers: the supervisor sets
``PROMETHEUS_MULTIPROC_DIR`` to a private directory (0700) it makes before starting the workers and removes when
it stops (:func:`metrics_dir`), or, when it was killed, the workers as they stop; each worker writes its values
there, and a scrape, answered by any worker, reads them all. A worker's pool gauges are removed when it stops.

``/metrics`` needs no API key, as Prometheus scrapes; with a metrics token set (``PETSTORE_SERVER_METRICS_TOKEN``
or ``--metrics-token-file``) it needs ``Authorization: Bearer <token>``, compared in constant time.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest, multiprocess
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from starlette.types import Scope, Send

from .wire import error_body

__all__ = ["METRICS_PATH", "MULTIPROC_ENV", "Metrics", "metrics_dir"]

METRICS_PATH = "/metrics"
#: prometheus-client's switch to multiprocess mode (read when it is first imported).
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_JSON = (b"content-type", b"application/json")
PoolStats = Callable[[], "tuple[int, int] | None"]


@contextmanager
def metrics_dir() -> Iterator[str]:
    """A private directory for the workers' metric files, named in ``PROMETHEUS_MULTIPROC_DIR`` while it exists."""
    path = tempfile.mkdtemp(prefix="petstore-metrics-")  # mode 0700
    previous = os.environ.get(MULTIPROC_ENV)
    os.environ[MULTIPROC_ENV] = path
    try:
        yield path
    finally:
        if previous is None:
            os.environ.pop(MULTIPROC_ENV, None)
        else:
            os.environ[MULTIPROC_ENV] = previous
        shutil.rmtree(path, ignore_errors=True)


class Metrics:
    """The service's metrics: every HTTP request counted (:class:`~.observed.Observed` hands it each) and
    ``GET /metrics`` answered."""

    def __init__(self, *, pool_stats: PoolStats, token: str | None = None) -> None:
        self._pool_stats = pool_stats
        self._token = None if token is None else hashlib.sha256(token.encode()).digest()
        self._dir = os.environ.get(MULTIPROC_ENV)
        registry = self._registry = CollectorRegistry()
        self._requests = Counter(
            "petstore_http_requests", "HTTP requests answered.", ["route", "method", "status"], registry=registry
        )
        self._latency = Histogram(
            "petstore_http_request_duration_seconds",
            "Time to answer a request, in seconds.",
            ["route"],
            buckets=_BUCKETS,
            registry=registry,
        )
        self._created = Counter("petstore_pets_created", "Pets created.", registry=registry)
        self._replays = Counter(
            "petstore_idempotent_replays", "Creates answered by replaying a 201.", registry=registry
        )
        self._in_use = Gauge(
            "petstore_db_pool_connections_in_use",
            "Database connections in use.",
            multiprocess_mode="livesum",
            registry=registry,
        )
        self._waiting = Gauge(
            "petstore_db_pool_requests_waiting",
            "Requests waiting for a database connection.",
            multiprocess_mode="livesum",
            registry=registry,
        )
        self._refresher: asyncio.Task[None] | None = None
        #: The labelled counter and histogram of each (route, method, status) seen (labels() costs a lookup).
        self._children: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}

    def start(self) -> None:
        """Refresh the pool gauges every second (from the worker's event loop)."""
        self._refresher = asyncio.get_running_loop().create_task(self._refresh_every_second())

    def stop(self, *, last: bool = False) -> None:
        """Stop refreshing; this worker's gauges leave the sum. ``last``: no supervisor will remove the directory
        (it was killed), so the workers do."""
        if self._refresher is not None:
            self._refresher.cancel()
        if self._dir is not None:
            multiprocess.mark_process_dead(os.getpid(), self._dir)  # type: ignore[no-untyped-call]
            if last:
                shutil.rmtree(self._dir, ignore_errors=True)

    async def _refresh_every_second(self) -> None:
        while True:
            self._refresh_pool()
            await asyncio.sleep(1.0)

    def _refresh_pool(self) -> None:
        stats = self._pool_stats()
        if stats is not None:
            self._in_use.set(stats[0])
            self._waiting.set(stats[1])

    def count(self, scope: Scope, *, status: int, replayed: bool, seconds: float) -> None:
        """The request ``scope``, answered ``status`` (``replayed``: with ``Idempotent-Replayed``) in ``seconds``."""
        method = scope["method"] if scope["method"] in _METHODS else "other"  # a label's values stay few
        series = (getattr(scope.get("route"), "path", None) or "unmatched", method, status)
        children = self._children.get(series)
        if children is None:
            children = self._children[series] = (
                self._requests.labels(series[0], method, str(status)),
                self._latency.labels(series[0]),
            )
        children[0].inc()
        children[1].observe(seconds)
        if status == 201:
            (self._replays if replayed else self._created).inc()

    async def scrape(self, scope: Scope, send: Send) -> None:
        """Answer ``/metrics``."""
        if self._token is not None and not self._authorized(scope):
            body = error_body(401, "this /metrics needs 'Authorization: Bearer <metrics token>'")
            await _reply(send, 401, body, [_JSON, (b"www-authenticate", b"Bearer")])
            return
        if scope["method"] not in ("GET", "HEAD"):
            await _reply(send, 405, error_body(405, "only GET reads /metrics"), [_JSON, (b"allow", b"GET, HEAD")])
            return
        self._refresh_pool()
        if self._dir is None:
            text = generate_latest(self._registry)
        else:
            everyone = CollectorRegistry()
            multiprocess.MultiProcessCollector(everyone, path=self._dir)  # type: ignore[no-untyped-call]
            text = generate_latest(everyone)
        await _reply(send, 200, text, [(b"content-type", CONTENT_TYPE_LATEST.encode())])

    def _authorized(self, scope: Scope) -> bool:
        value = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
        if value[:7].lower() != b"bearer ":
            return False
        assert self._token is not None
        return hmac.compare_digest(hashlib.sha256(value[7:].strip()).digest(), self._token)


async def _reply(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    headers = [*headers, (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
