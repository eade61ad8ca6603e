"""Bearer authentication on every operation."""

from __future__ import annotations

import logging

import httpx
import pytest

from petstore_server.app import create_app

from .support import KEY, OTHER_KEY, assert_error

OPERATIONS = [
    ("GET", "/pets", None),
    ("POST", "/pets", {"name": "Rex", "categoryId": 1}),
    ("GET", "/pets/1", None),
    ("GET", "/store/orders", None),
]


@pytest.mark.parametrize(("method", "path", "body"), OPERATIONS)
async def test_missing_key_is_401_with_challenge(anon: httpx.AsyncClient, method: str, path: str, body) -> None:
    response = await anon.request(method, path, json=body)
    assert_error(response, 401, "unauthorized", mentions="Bearer")
    assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(("method", "path", "body"), OPERATIONS)
@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer wrong",
        f"Basic {KEY}",
        KEY,
        "Bearer",
        "Bearer ",
        f"Bearer {KEY}x",
        f"Bearer {KEY[:-1]}",
        "Bearer " + "k" * 50_000,
    ],
)
async def test_invalid_key_is_401(anon: httpx.AsyncClient, method: str, path: str, body, authorization: str) -> None:
    response = await anon.request(method, path, json=body, headers={"Authorization": authorization})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert_error(response, 401, "unauthorized")


@pytest.mark.parametrize("authorization", [f"Bearer {KEY}", f"bearer {KEY}", f"BEARER {KEY}", f"Bearer {OTHER_KEY}"])
async def test_any_configured_key_is_accepted(anon: httpx.AsyncClient, authorization: str) -> None:
    response = await anon.get("/pets", headers={"Authorization": authorization})
    assert response.status_code == 200


async def test_openapi_document_needs_no_key(anon: httpx.AsyncClient) -> None:
    response = await anon.get("/openapi.json")
    assert response.status_code == 200
    assert response.json()["info"]["version"] == "1.0.0"


@pytest.mark.parametrize("keys", [[], [""], [None]])
def test_create_app_refuses_no_usable_key(served, keys) -> None:
    with pytest.raises(ValueError, match="API key"):
        create_app(served, api_keys=keys)


async def test_keys_are_never_logged(client: httpx.AsyncClient, served, monkeypatch, caplog) -> None:
    caplog.set_level(logging.DEBUG)

    async def broken(*, pet_id: int) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(served, "get_pet", broken)
    await client.get("/pets/1")
    await client.post("/pets", json={"name": "Rex", "categoryId": 1}, headers={"Idempotency-Key": "idem-secret-42"})
    assert "disk on fire" in caplog.text
    assert KEY not in caplog.text and "idem-secret-42" not in caplog.text
