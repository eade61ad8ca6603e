"""The app as ``petstore serve`` runs it: the store opened in the worker's own event loop.

:func:`served_app` is the uvicorn factory; its settings are pickled into each worker process
(``--workers``), so API keys (and the metrics token) travel through the supervisor's pipe, not the environment.
Around the app: the metrics and the access log, in one middleware (:mod:`.observed`), which answers
``/metrics``. A worker of a supervisor watches it (:mod:`.supervision`).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

from petstore_os.db_url import parse_db, redact

from .accesslog import STDERR, AccessLog, open_access_log
from .app import create_app
from .metrics import Metrics
from .observed import Observed
from .storage import Store, open_store
from .supervision import watch_supervisor

__all__ = ["ServeSettings", "ServedApp", "served_app"]

logger = logging.getLogger("petstore_server")


@dataclass(frozen=True, slots=True)
class ServeSettings:
    db: str
    api_keys: tuple[str, ...]
    #: Where access lines go (a file, ``-`` or :data:`~.accesslog.STDERR`); None: nowhere.
    access_log: str | None = STDERR
    #: The pid of the supervisor that started this worker; None when the server runs in one process.
    supervisor: int | None = None
    #: The bearer token ``/metrics`` asks for; None: it asks for none.
    metrics_token: str | None = None


class ServedApp:
    """ASGI app that opens its store at lifespan startup and closes it at shutdown."""

    def __init__(self, settings: ServeSettings) -> None:
        self._settings = settings
        self._store: Store | None = None
        self._app: ASGIApp | None = None
        self._metrics: Metrics | None = None
        self._log: AccessLog | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        assert self._app is not None, "the service runs with lifespan='on'"
        await self._app(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self._start()
                except Exception as exc:  # noqa: BLE001 -- said in one line without the password (no traceback)
                    reason = f"cannot open the database: {redact(str(exc), self._settings.db)}"
                    logger.error("%s", reason)
                    await send({"type": "lifespan.startup.failed", "message": reason})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self._metrics is not None:
                    supervisor = self._settings.supervisor
                    self._metrics.stop(last=supervisor is not None and os.getppid() != supervisor)
                if self._store is not None:
                    await self._store.close()
                if self._log is not None:
                    self._log.flush()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _start(self) -> None:
        settings = self._settings
        if settings.supervisor is not None:
            watch_supervisor(settings.supervisor)
        self._store = store = await open_store(parse_db(settings.db))
        self._metrics = Metrics(pool_stats=store.pool_stats, token=settings.metrics_token)
        self._metrics.start()
        if settings.access_log is not None:
            self._log = AccessLog(fd=open_access_log(settings.access_log))
        app = create_app(store, api_keys=settings.api_keys)
        self._app = Observed(app, metrics=self._metrics, log=self._log)


def served_app(settings: ServeSettings) -> ServedApp:
    return ServedApp(settings)
