"""How long SQLite work holds the event loop: before (calls inline, as the service did) and after (one thread).

    .venv/bin/python bench/bench_loop_blocking.py [--pets 200000] [--seconds 3]

In-process: 8 concurrent clients page through ``GET /v1/pets?limit=100&status=sold`` (httpx's
ASGI transport) while a ticker asks the loop for a 1 ms sleep again and again; a tick's lag is
how much later than 1 ms it woke. Blocking shows as lag: a loop that waits on SQLite cannot
wake the ticker (nor accept, read or write any other connection).
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from petstore_server.app import create_app
from petstore_server.records import Created, Idempotency, Page, PetRecord
from petstore_server.sqlite_store import SqliteStore
from petstore_server.store import PetStore

KEY = "sk-bench-loop"


class InlineStore:
    """The service before this change: PetStore called right on the event loop."""

    def __init__(self, pets: PetStore) -> None:
        self.pets = pets

    async def list_page(self, *, limit: int, status: str | None, after_id: int | None) -> Page:
        return self.pets.list_page(limit=limit, status=status, after_id=after_id)

    async def get_pet(self, *, pet_id: int) -> PetRecord | None:
        return self.pets.get_record(pet_id)

    async def create_pet(
        self, *, name: str, category_id: int, status: str | None, idempotency: Idempotency | None
    ) -> Created:
        raise NotImplementedError

    async def list_orders(self) -> bytes:
        return b"[]"

    async def seed_sample(self) -> int:
        return 0

    async def health_check(self) -> None:
        self.pets.ping()

    async def close(self) -> None:
        self.pets.close()


async def _client(http: httpx.AsyncClient, stop: float, done: list[int]) -> None:
    url: str | None = "/v1/pets?limit=100&status=sold"
    while time.perf_counter() < stop:
        response = await http.get(url or "/v1/pets?limit=100&status=sold")
        link = response.headers.get("link")
        url = str(response.url.join(link[1 : link.index(">")])) if link else None
        done[0] += 1


async def measure(store: object, seconds: float) -> dict[str, float]:
    app = create_app(store, api_keys=[KEY])  # type: ignore[arg-type]
    stop = time.perf_counter() + seconds
    done = [0]
    lags: list[float] = []

    async def ticker() -> None:
        while time.perf_counter() < stop:
            start = time.perf_counter()
            await asyncio.sleep(0.001)
            lags.append((time.perf_counter() - start - 0.001) * 1000)

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://x", headers={"Authorization": f"Bearer {KEY}"}
    ) as http:
        await asyncio.gather(ticker(), *(_client(http, stop, done) for _ in range(8)))
    lags.sort()
    return {
        "requests_per_s": done[0] / seconds,
        "lag_p50_ms": statistics.median(lags),
        "lag_p99_ms": lags[int(len(lags) * 0.99)],
        "lag_max_ms": lags[-1],
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pets", type=int, default=200_000)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "pets.db"
        PetStore(db).close()
        with sqlite3.connect(db) as conn:
            conn.executemany(
                "INSERT INTO pets VALUES (?, ?, ?, ?)",
                ((i, f"Pet {i}", i % 4, ("available", "pending", "sold")[i % 3]) for i in range(1, args.pets + 1)),
            )
        conn.close()
        for label, make in (("before: inline", InlineStore), ("after: one thread", SqliteStore)):
            store = make(PetStore(db))
            figures = asyncio.run(measure(store, args.seconds))
            asyncio.run(store.close())
            print(f"{label:20} " + "  ".join(f"{k}={v:.2f}" for k, v in figures.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
