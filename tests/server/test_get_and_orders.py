"""getPet (deprecated, 404s) and the orders listing."""

from __future__ import annotations

import httpx
import pytest

from .support import assert_error


async def test_get_pet_returns_it_with_deprecation_headers(client: httpx.AsyncClient) -> None:
    response = await client.get("/pets/3")
    assert response.status_code == 200
    assert response.json() == {"id": 3, "name": "Tweety", "categoryId": 3, "status": "pending"}
    assert response.headers["deprecation"] == "@1735689600"
    assert response.headers["sunset"] == "Thu, 05 Dec 2030 00:00:00 GMT"
    assert response.headers["link"] == '<../pets>; rel="successor-version"'


@pytest.mark.parametrize("pet_id", ["13", "0", "-1", str(2**63 - 1), str(-(2**63))])
async def test_unknown_pet_is_404(client: httpx.AsyncClient, pet_id: str) -> None:
    assert_error(await client.get(f"/pets/{pet_id}"), 404, "not_found", mentions=pet_id)


@pytest.mark.parametrize(
    "pet_id", ["abc", "1.0", "1e3", str(2**63), str(-(2**63) - 1), "9" * 5000, "%20", "%00", "true", "\u0663"]
)
async def test_pet_id_that_is_not_int64_is_404(client: httpx.AsyncClient, pet_id: str) -> None:
    assert_error(await client.get(f"/pets/{pet_id}"), 404, "not_found")


async def test_unknown_query_parameter_on_get_is_400(client: httpx.AsyncClient) -> None:
    assert_error(await client.get("/pets/1?verbose=1"), 400, "bad_request", mentions="verbose")


async def test_orders_listing_is_an_empty_array(client: httpx.AsyncClient) -> None:
    response = await client.get("/store/orders")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == []


async def test_unknown_query_parameter_on_orders_is_400(client: httpx.AsyncClient) -> None:
    assert_error(await client.get("/store/orders?limit=5"), 400, "bad_request", mentions="limit")
