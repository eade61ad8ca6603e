"""listPets: limit, status filter, unknown parameters, Link pagination with an opaque cursor."""

from __future__ import annotations

import base64
import re
from urllib.parse import urljoin

import httpx
import pytest

from petstore_server.store import SAMPLE_PETS

from .support import assert_error

NEXT = re.compile(r'^<(?P<url>[^>]+)>; rel="next"$')


def add_pets(store, count: int, status: str | None = "available") -> list[int]:
    return [store.create_pet(name=f"extra-{i}", category_id=i, status=status)["id"] for i in range(count)]


def next_url(response: httpx.Response) -> str | None:
    """The next page's URL, resolved against the request URL; the link itself is a relative reference."""
    link = response.headers.get("link")
    if link is None:
        return None
    match = NEXT.match(link)
    assert match, link
    assert match["url"].startswith("?"), "a query-only reference survives any proxy, host and prefix"
    return urljoin(str(response.url), match["url"])


async def test_default_page_is_twenty_in_id_order(client: httpx.AsyncClient, store) -> None:
    add_pets(store, 15)
    response = await client.get("/pets")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    ids = [pet["id"] for pet in response.json()]
    assert ids == list(range(1, 21))


async def test_sample_pets_come_back_in_wire_shape(client: httpx.AsyncClient) -> None:
    pets = (await client.get("/pets")).json()
    expected = [{"id": i, "name": n, "categoryId": c, "status": s} for i, n, c, s in SAMPLE_PETS]
    assert pets == expected


@pytest.mark.parametrize("limit", [1, 7, 100])
async def test_limit_bounds_the_page(client: httpx.AsyncClient, store, limit: int) -> None:
    add_pets(store, 100)
    assert len((await client.get("/pets", params={"limit": limit})).json()) == limit


@pytest.mark.parametrize("limit", ["0", "101", "-1", "abc", "", "1.5", "1e2", " 5", "\u0663", "9" * 5000, "+5"])
async def test_invalid_limit_is_400(client: httpx.AsyncClient, limit: str) -> None:
    assert_error(await client.get("/pets", params={"limit": limit}), 400, "bad_request", mentions="limit")


@pytest.mark.parametrize("status", ["available", "pending", "sold"])
async def test_status_filter_returns_only_that_status(client: httpx.AsyncClient, store, status: str) -> None:
    add_pets(store, 3, status=None)
    pets = (await client.get("/pets", params={"status": status, "limit": 100})).json()
    assert pets and {pet["status"] for pet in pets} == {status}
    assert [pet["id"] for pet in pets] == [i for i, _, _, s in SAMPLE_PETS if s == status]


@pytest.mark.parametrize("status", ["Available", "lost", "", "available,sold"])
async def test_invalid_status_is_400(client: httpx.AsyncClient, status: str) -> None:
    assert_error(await client.get("/pets", params={"status": status}), 400, "bad_request", mentions="status")


@pytest.mark.parametrize("query", ["offset=5", "page=2", "limit=5&sort=name", "LIMIT=5"])
async def test_unknown_query_parameter_is_400(client: httpx.AsyncClient, query: str) -> None:
    assert_error(await client.get(f"/pets?{query}"), 400, "bad_request", mentions="unknown query parameter")


async def test_repeated_parameter_is_400(client: httpx.AsyncClient) -> None:
    assert_error(await client.get("/pets?limit=5&limit=6"), 400, "bad_request", mentions="limit")


@pytest.mark.parametrize("query", ["limit=%ff", "a=1&" * 11 + "limit=1"])
async def test_malformed_query_is_400(client: httpx.AsyncClient, query: str) -> None:
    assert (await client.get(f"/pets?{query}")).status_code == 400


async def test_link_walks_every_page_exactly_once(client: httpx.AsyncClient, store) -> None:
    add_pets(store, 11)  # 23 pets
    url: str | None = "/pets?limit=5"
    seen: list[int] = []
    while url is not None:
        response = await client.get(url)
        assert response.status_code == 200
        seen += [pet["id"] for pet in response.json()]
        url = next_url(response)
        if url is not None:
            assert url.startswith("http://testserver/v1/pets?limit=5&cursor=")
    assert seen == list(range(1, 24))


async def test_full_last_page_has_no_link(client: httpx.AsyncClient) -> None:
    first = await client.get("/pets?limit=6")
    second = await client.get(next_url(first))
    assert len(second.json()) == 6 and next_url(second) is None
    assert next_url(await client.get("/pets?limit=12")) is None


async def test_link_keeps_the_status_filter(client: httpx.AsyncClient) -> None:
    response = await client.get("/pets?limit=2&status=sold")
    url = next_url(response)
    assert re.fullmatch(r"http://testserver/v1/pets\?limit=2&status=sold&cursor=[A-Za-z0-9_-]+", url)
    rest = (await client.get(url)).json()
    assert [pet["id"] for pet in response.json() + rest] == [4, 6, 9, 11]


@pytest.mark.parametrize("host", ["evil>; rel=x", "a b", "x" * 300 + "<"])
async def test_malformed_host_header_does_not_leak_into_link(client: httpx.AsyncClient, host: str) -> None:
    response = await client.get("/pets?limit=1", headers={"Host": host})
    assert next_url(response).startswith("http://testserver/v1/pets?")


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "!!",
        "abc",
        "5",
        _b64("after:5"),
        "AAAAAAAAAAB",
        "AAAAAAAAAAA=",
        "AAAAAAAAAAAA",
        "AAAAAAAAA+A",
        "A" * 41,
    ],
)
async def test_invalid_cursor_is_400(client: httpx.AsyncClient, cursor: str) -> None:
    assert_error(await client.get("/pets", params={"cursor": cursor}), 400, "bad_request", mentions="cursor")


async def test_cursor_survives_new_pets(client: httpx.AsyncClient, store) -> None:
    first = await client.get("/pets?limit=10")
    new_ids = add_pets(store, 2)
    rest = (await client.get(next_url(first))).json()
    assert [pet["id"] for pet in rest] == [11, 12, *new_ids]
