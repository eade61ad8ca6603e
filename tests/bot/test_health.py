"""A bot process's /healthz and /metrics (``--metrics-port``): on 127.0.0.1, commands counted by outcome, the held
writes by kind, whether it holds the lease; through the real endpoint (aiohttp on a free port) over a bot core on the
sandbox, its state a real SQLite file."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import httpx

from petstore_bot.background import bot_health
from petstore_bot.health import LOOPBACK, BotMetrics, HealthServer
from petstore_bot.replicas import Leadership
from petstore_state.lease import open_lease

from .conftest import ALICE, BOB, Bot


def sample(text: str, name: str, **labels: str) -> float:
    """The value of ``name{labels}`` in a Prometheus text page."""
    wanted = name + ("{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}" if labels else "")
    for line in text.splitlines():
        key, _, value = line.rpartition(" ")
        if key == wanted:
            return float(value)
    raise AssertionError(f"no sample {wanted} in:\n{text}")


async def test_healthz_and_metrics_count_commands_held_writes_and_the_lease(
    make_bot: Callable[..., Bot], tmp_path: Path
) -> None:
    holder: list[HealthServer] = []
    bot = make_bot(observe=lambda outcome: holder[0].metrics.observe(outcome))
    leadership = Leadership(open_lease(None, state_dir=tmp_path / "lease", name="matrix test"))
    health = bot_health(bot.state, leadership, port=0)
    assert health is not None and bot_health(bot.state, leadership, port=None) is None  # off unless asked for
    holder.append(health)
    stop = asyncio.Event()
    holding = asyncio.create_task(leadership.run(stop))
    serving = asyncio.create_task(health.run(stop))
    try:
        while health.bound is None or not await leadership.leading():
            await asyncio.sleep(0)  # the server binds and the lease is taken, each in its own task
        await bot.room.text(BOB, "!list")
        await bot.room.text(BOB, "!get 1")
        await bot.room.text(BOB, "!add Rex --category 1")  # refused: a viewer
        await bot.room.text(ALICE, "!add Rex --category 1")  # held for !confirm
        async with httpx.AsyncClient(base_url=f"http://{LOOPBACK}:{health.bound}", timeout=10) as http:
            healthz = await http.get("/healthz")
            page = await http.get("/metrics")
    finally:
        stop.set()
        await asyncio.gather(holding, serving)
        leadership.lease.close()
    assert healthz.status_code == 200 and healthz.json() == {"status": "ok", "lease_held": True}
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/plain")
    text = page.text
    assert sample(text, "petstore_bot_commands_total", command="list", outcome="ok") == 1
    assert sample(text, "petstore_bot_commands_total", command="get", outcome="ok") == 1
    assert sample(text, "petstore_bot_commands_total", command="add", outcome="forbidden") == 1
    assert sample(text, "petstore_bot_commands_total", command="add", outcome="held") == 1
    assert sample(text, "petstore_bot_held_writes", kind="confirm") == 1
    assert sample(text, "petstore_bot_held_writes", kind="approve") == 0
    assert sample(text, "petstore_bot_lease_held") == 1


async def test_a_process_without_the_lease_says_so() -> None:
    async def no() -> bool:
        return False

    async def none() -> dict[str, int]:
        return {}

    metrics = BotMetrics(leading=no, held=none)
    assert sample((await metrics.scrape()).decode(), "petstore_bot_lease_held") == 0
