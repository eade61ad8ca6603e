"""405 with Allow, unknown paths, internal errors as Error bodies, oversized headers."""

from __future__ import annotations

import httpx
import pytest

from .support import KEY, assert_error


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("PUT", "/pets", "GET, HEAD, POST"),
        ("DELETE", "/pets", "GET, HEAD, POST"),
        ("PATCH", "/pets", "GET, HEAD, POST"),
        ("OPTIONS", "/pets", "GET, HEAD, POST"),
        ("POST", "/pets/1", "GET, HEAD"),
        ("DELETE", "/pets/1", "GET, HEAD"),
        ("POST", "/store/orders", "GET, HEAD"),
        ("POST", "/openapi.json", "GET, HEAD"),
    ],
)
async def test_other_methods_are_405_with_allow(client: httpx.AsyncClient, method: str, path: str, allow: str) -> None:
    response = await client.request(method, path)
    assert_error(response, 405, "method_not_allowed", mentions=method)
    assert response.headers["allow"] == allow


@pytest.mark.parametrize(
    "path", ["/v1/pets/", "/v1/pet", "/pets", "/", "/v2/pets", "/v1/pets/1/photos", "/v1/store/orders/1"]
)
async def test_unknown_paths_are_404(client: httpx.AsyncClient, path: str) -> None:
    assert_error(await client.get(f"http://testserver{path}"), 404, "not_found")


async def test_head_is_answered_like_get(client: httpx.AsyncClient) -> None:
    assert (await client.head("/pets")).status_code == 200


async def test_store_failure_is_a_500_error_body(client: httpx.AsyncClient, served, monkeypatch) -> None:
    async def broken(**kwargs: object) -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(served, "list_page", broken)
    response = await client.get("/pets")
    body = assert_error(response, 500, "internal_error")
    assert "secret internals" not in body["message"]


async def test_failure_outside_the_endpoints_is_a_500_error_body(app) -> None:
    """The app-wide handler: a broken scope fails inside the router (before any endpoint), and is a 500 Error body."""
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": b""}

    async def send(message: dict) -> None:
        sent.append(message)

    with pytest.raises(KeyError):
        await app({"type": "http", "method": "GET", "headers": [], "app": app}, receive, send)
    assert sent[0]["status"] == 500
    assert b'"code":"internal_error"' in sent[1]["body"]


@pytest.mark.parametrize("header", ["X-Padding", "Accept", "Cookie", "Idempotency-Key"])
async def test_huge_header_values_never_500(client: httpx.AsyncClient, header: str) -> None:
    response = await client.post("/pets", json={"name": "Rex", "categoryId": 1}, headers={header: "a" * 100_000})
    assert response.status_code in (201, 400)


async def test_many_headers_never_500(app) -> None:
    headers = [(f"X-H{i}", "v") for i in range(2000)] + [("Authorization", f"Bearer {KEY}")]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver/v1") as http:
        assert (await http.get("/pets", headers=headers)).status_code == 200


async def test_error_bodies_share_one_shape(client: httpx.AsyncClient, anon: httpx.AsyncClient) -> None:
    cases = [
        (await client.get("/pets?limit=0"), 400, "bad_request"),
        (await anon.get("/pets", headers={"Authorization": "Bearer nope"}), 401, "unauthorized"),
        (await client.get("/pets/999"), 404, "not_found"),
        (await client.put("/pets"), 405, "method_not_allowed"),
        (await client.post("/pets", json={"pad": "x" * 20_000}), 413, "payload_too_large"),
        (
            await client.post("/pets", content=b"{}", headers={"Content-Type": "text/plain"}),
            415,
            "unsupported_media_type",
        ),
    ]
    for response, status, code in cases:
        assert_error(response, status, code)
