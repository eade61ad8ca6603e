"""A bot process's health and metrics, for its operator: ``GET /healthz`` and ``GET /metrics`` (Prometheus's text
format) on 127.0.0.1, off unless asked for (``petstore bot matrix|slack --metrics-port PORT``).

One registry per process (prometheus_client's, not its global one): commands answered by command and outcome
(``ok``, ``held`` for a write waiting for ``!confirm`` or a second person, else the failure's kind), the writes held
in the shared state now by kind (confirmations, approvals), and whether this process holds its bot's lease (answers
and runs the background work; with replicas, exactly one shows 1). The gauges are read when scraped.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, generate_latest

from bot_commands.outcome import Outcome
from bot_commands.results import ApprovalNeeded, ConfirmationNeeded

__all__ = ["BotMetrics", "HealthServer", "outcome_label"]

log = logging.getLogger("petstore_bot")

#: The address the endpoint listens on: this host only (metrics name rooms' commands; no key guards them).
LOOPBACK = "127.0.0.1"


def outcome_label(outcome: Outcome) -> str:
    """``ok``, ``held`` (a write waiting for a confirmation or an approval), or the failure's kind."""
    if outcome.failure is not None:
        return outcome.failure.kind
    return "held" if isinstance(outcome.result, ConfirmationNeeded | ApprovalNeeded) else "ok"


class BotMetrics:
    """The metrics of one bot process. ``leading``: whether it holds the lease now; ``held``: the writes waiting in
    the shared state, by kind (``confirm``, ``approve``)."""

    def __init__(
        self, *, leading: Callable[[], Awaitable[bool]], held: Callable[[], Awaitable[dict[str, int]]]
    ) -> None:
        self.registry = CollectorRegistry()
        self._leading, self._held = leading, held
        self.commands = Counter(
            "petstore_bot_commands", "Commands answered, by command and outcome", ["command", "outcome"],
            registry=self.registry,
        )  # fmt: skip
        self.waiting = Gauge(
            "petstore_bot_held_writes", "Writes waiting for a confirmation or an approval, by kind", ["kind"],
            registry=self.registry,
        )  # fmt: skip
        self.lease = Gauge(
            "petstore_bot_lease_held", "1 while this process holds its bot's lease (it answers)", registry=self.registry
        )

    def observe(self, outcome: Outcome) -> None:
        """Count one answered command."""
        command = outcome.invocation.command.name if outcome.invocation is not None else "unknown"
        self.commands.labels(command=command, outcome=outcome_label(outcome)).inc()

    async def leading(self) -> bool:
        return await self._leading()

    async def scrape(self) -> bytes:
        """The gauges read now, then every metric in Prometheus's text format."""
        self.lease.set(1 if await self._leading() else 0)
        held = await self._held()
        for kind in ("confirm", "approve"):
            self.waiting.labels(kind=kind).set(held.get(kind, 0))
        return generate_latest(self.registry)


class HealthServer:
    """``/healthz`` and ``/metrics`` on 127.0.0.1:``port`` beside the transport (a bot's background work)."""

    def __init__(self, metrics: BotMetrics, *, port: int) -> None:
        self.metrics, self.port = metrics, port
        self.bound: int | None = None

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/metrics", self._metrics)
        return app

    async def _healthz(self, _: web.Request) -> web.Response:
        body = {"status": "ok", "lease_held": await self.metrics.leading()}
        return web.Response(text=json.dumps(body), content_type="application/json")

    async def _metrics(self, _: web.Request) -> web.Response:
        body = await self.metrics.scrape()
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def run(self, stop: asyncio.Event) -> None:
        """Serve until ``stop``; the port actually bound is :attr:`bound` (``--metrics-port 0`` picks one)."""
        runner = web.AppRunner(self.app(), access_log=None)
        await runner.setup()
        try:
            site = web.TCPSite(runner, LOOPBACK, self.port)
            await site.start()
            self.bound = int(runner.addresses[0][1])
            log.info("health and metrics on http://%s:%d (/healthz, /metrics)", LOOPBACK, self.bound)
            await stop.wait()
        finally:
            await runner.cleanup()
