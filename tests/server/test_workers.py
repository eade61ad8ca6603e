"""`petstore serve --workers 2` on SQLite (WAL) and PostgreSQL: no duplicate ids, no lost pets, one key one pet."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from .support import AUTH, KEY, descendants, running_server

pytestmark = pytest.mark.slow


async def all_pets(http: httpx.AsyncClient) -> list[dict]:
    pets: list[dict] = []
    async for page in _pages(http):
        pets += page
    return pets


async def _pages(http: httpx.AsyncClient):
    url: str | None = "/pets?limit=100"
    while url:
        response = await http.get(url)
        yield response.json()
        link = response.headers.get("link")
        url = str(response.url.join(link.split(">")[0][1:])) if link else None


async def test_two_workers_share_one_database(db_target: str) -> None:
    with running_server(db_target, "--workers", "2", keys=[KEY]) as (proc, url, _):
        limits = httpx.Limits(max_connections=16, max_keepalive_connections=0)  # spread over workers
        async with httpx.AsyncClient(base_url=url, headers=AUTH, limits=limits, timeout=30) as http:
            made = await asyncio.gather(
                *(http.post("/pets", json={"name": f"w{i}", "categoryId": i}) for i in range(200))
            )
            assert {r.status_code for r in made} == {201}
            ids = [r.json()["id"] for r in made]
            assert len(set(ids)) == 200
            key = {"Idempotency-Key": "one-key-many-workers"}
            same = await asyncio.gather(
                *(http.post("/pets", json={"name": "Once", "categoryId": 1}, headers=key) for _ in range(24))
            )
            assert {r.status_code for r in same} == {201}
            assert len({r.json()["id"] for r in same}) == 1
            assert sum("idempotent-replayed" in r.headers for r in same) == 23
            listed = await all_pets(http)
        assert len(descendants(proc.pid)) >= 2, "two worker processes serve"
    listed_ids = [pet["id"] for pet in listed]
    assert listed_ids == sorted(listed_ids) and len(listed_ids) == 201
    assert set(ids) | {same[0].json()["id"]} == set(listed_ids)
