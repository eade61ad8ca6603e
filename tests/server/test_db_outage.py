"""The database goes away and comes back; the service stays honest.

PostgreSQL: a real ``petstore serve`` on a throwaway cluster that the test restarts and stops (``pg_ctl``): after a
restart no request meets a connection the restart closed; while it is down every request is a 503 with
``Retry-After`` and ``code: service_unavailable``, ``/livez`` stays 200 and ``/readyz`` is 503; petstore's own
client retries a keyed create through the outage and makes one pet. SQLite: the service's store, whose file is
moved away and back, or replaced.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import time
from pathlib import Path

import httpx
import pytest
from pg_support import Cluster, throwaway_cluster

from petstore_api import PetStoreClient
from petstore_api.policy import RetryPolicy
from petstore_server.app import create_app
from petstore_server.sqlite_store import SqliteStore

from .support import AUTH, BASE, KEY, assert_error, descendants, running_server

pytestmark = pytest.mark.slow


def assert_unavailable(response: httpx.Response) -> None:
    assert_error(response, 503, "service_unavailable")
    assert response.headers["retry-after"].isdigit()


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    with throwaway_cluster() as cluster:
        yield cluster


async def test_postgresql_restart_and_outage(cluster: Cluster) -> None:
    with running_server(cluster.server.url(), keys=[KEY]) as (_, url, _):
        limits = httpx.Limits(max_connections=8)
        async with httpx.AsyncClient(base_url=url, headers=AUTH, limits=limits, timeout=30) as http:
            created = await http.post("/pets", json={"name": "Before", "categoryId": 1})
            assert created.status_code == 201
            # Several pooled connections, then a restart that closes them all while they sit idle.
            assert {r.status_code for r in await asyncio.gather(*(http.get("/pets") for _ in range(16)))} == {200}
            cluster.stop()
            cluster.start()
            after = [await http.get("/pets?limit=1") for _ in range(4)]
            after += await asyncio.gather(*(http.get("/pets") for _ in range(16)))
            assert [r.status_code for r in after] == [200] * 20, [r.text for r in after if r.status_code != 200]

            cluster.stop()
            *refused, live = await asyncio.gather(
                http.get("/pets"),
                http.post("/pets", json={"name": "Lost", "categoryId": 1}),
                http.get("/readyz"),
                http.get("/healthz"),
                http.get("/livez"),
            )
            for response in refused:
                assert_unavailable(response)
            assert live.json() == {"status": "ok"}

            # petstore's client retries a keyed create on 503 (Retry-After) until the database is back.
            retry = RetryPolicy(attempts=30, backoff=0.1, backoff_max=0.5)
            async with PetStoreClient(base_url=url, api_key=KEY, retry=retry, allow_insecure_http=True) as client:
                creating = asyncio.create_task(client.create_pet(name="Through", category_id=2))
                response = await http.get("/readyz")  # the create is being refused meanwhile
                assert_unavailable(response)
                cluster.start()
                made = await asyncio.wait_for(creating, timeout=60)
            assert (await http.get("/readyz")).status_code == 200
            burst = await asyncio.gather(*(http.get("/pets?limit=100") for _ in range(16)))
            assert {r.status_code for r in burst} == {200}
            names = [pet["name"] for pet in burst[0].json()]
            assert names == ["Before", "Through"] and not made.replayed


async def test_a_frozen_postgresql_is_503_within_the_bound_and_served_again_when_it_thaws(cluster: Cluster) -> None:
    """Every process of the cluster stopped (SIGSTOP: a database that holds its connections and answers nothing).
    The service answers 503 by its own bound (a request held past the client's 10 s timeout fails the test), /livez
    stays 200; once the processes go on (SIGCONT), requests are served again."""
    with running_server(cluster.server.url(), keys=[KEY]) as (_, url, _):
        async with httpx.AsyncClient(base_url=url, headers=AUTH, timeout=10) as http:
            assert (await http.get("/pets")).status_code == 200
            postmaster = int((cluster.data / "postmaster.pid").read_text().split()[0])
            frozen = [postmaster, *descendants(postmaster)]
            for pid in frozen:
                os.kill(pid, signal.SIGSTOP)
            try:
                *refused, live = await asyncio.gather(
                    http.get("/pets"),
                    http.post("/pets", json={"name": "Frozen", "categoryId": 1}),
                    http.get("/readyz"),
                    http.get("/livez"),
                )
            finally:
                for pid in frozen:
                    os.kill(pid, signal.SIGCONT)
            for response in refused:
                assert_unavailable(response)
            assert live.json() == {"status": "ok"}
            deadline = time.monotonic() + 30
            while (await http.get("/pets")).status_code != 200:
                assert time.monotonic() < deadline, "not served again 30 s after the database went on"


async def test_sqlite_file_moved_away_and_back(tmp_path: Path) -> None:
    path = tmp_path / "pets.db"
    store = await SqliteStore.open(path)
    app = create_app(store, api_keys=[KEY])
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE, headers=AUTH) as http:
            assert (await http.post("/pets", json={"name": "Kept", "categoryId": 1})).status_code == 201
            path.rename(tmp_path / "away.db")
            # A write checks the path every time; a read relies on a check up to READ_CHECK_INTERVAL old, which
            # the failed check of the write is not.
            assert_unavailable(await http.post("/pets", json={"name": "Lost", "categoryId": 1}))
            assert_unavailable(await http.get("/pets"))
            assert_unavailable(await http.get("/readyz"))
            assert (await http.get("/livez")).status_code == 200
            (tmp_path / "away.db").rename(path)
            assert (await http.get("/readyz")).status_code == 200
            assert [p["name"] for p in (await http.get("/pets")).json()] == ["Kept"]

            # Another file at the path (a restored copy): the service opens it and serves what it holds.
            shutil.copy(path, tmp_path / "restored.db")
            (tmp_path / "restored.db").rename(path)
            assert (await http.post("/pets", json={"name": "After", "categoryId": 1})).status_code == 201
    finally:
        await store.close()
    reopened = await SqliteStore.open(path)
    try:
        page = await reopened.list_page(limit=10, status=None, after_id=None)
    finally:
        await reopened.close()
    assert b'"Kept"' in page.body and b'"After"' in page.body
