"""createPet: 201 with id, field-by-field 400s, 415, 413, hostile names kept literally."""

from __future__ import annotations

import json

import httpx
import pytest

from petstore_server.wire import NAME_MAX_LENGTH

from .support import assert_error


async def test_created_pet_has_id_and_is_stored(client: httpx.AsyncClient) -> None:
    response = await client.post("/pets", json={"name": "Fido", "categoryId": 7, "status": "pending"})
    assert response.status_code == 201
    pet = response.json()
    assert pet == {"id": 13, "name": "Fido", "categoryId": 7, "status": "pending"}
    assert (await client.get("/pets/13")).json() == pet


async def test_omitted_status_stays_absent(client: httpx.AsyncClient) -> None:
    created = (await client.post("/pets", json={"name": "Nameless", "categoryId": 1})).json()
    assert created == {"id": 13, "name": "Nameless", "categoryId": 1}
    assert (await client.get("/pets/13")).json() == created
    assert (await client.get("/pets?limit=100")).json()[-1] == created


@pytest.mark.parametrize("status", ["available", "pending", "sold"])
async def test_any_status_may_be_given(client: httpx.AsyncClient, status: str) -> None:
    response = await client.post("/pets", json={"name": "A", "categoryId": 1, "status": status})
    assert response.status_code == 201 and response.json()["status"] == status


@pytest.mark.parametrize("category_id", [0, -1, 2**63 - 1, -(2**63)])
async def test_int64_category_ids_round_trip(client: httpx.AsyncClient, category_id: int) -> None:
    response = await client.post("/pets", json={"name": "A", "categoryId": category_id})
    assert response.status_code == 201 and response.json()["categoryId"] == category_id


INVALID = [
    ({"categoryId": 1}, "name"),
    ({"name": None, "categoryId": 1}, "name"),
    ({"name": 5, "categoryId": 1}, "name"),
    ({"name": ["Rex"], "categoryId": 1}, "name"),
    ({"name": "", "categoryId": 1}, "name"),
    ({"name": "x" * (NAME_MAX_LENGTH + 1), "categoryId": 1}, "name"),
    ({"name": "Rex"}, "categoryId"),
    ({"name": "Rex", "categoryId": "1"}, "categoryId"),
    ({"name": "Rex", "categoryId": 1.0}, "categoryId"),
    ({"name": "Rex", "categoryId": 1.5}, "categoryId"),
    ({"name": "Rex", "categoryId": True}, "categoryId"),
    ({"name": "Rex", "categoryId": None}, "categoryId"),
    ({"name": "Rex", "categoryId": 2**63}, "categoryId"),
    ({"name": "Rex", "categoryId": -(2**63) - 1}, "categoryId"),
    ({"name": "Rex", "categoryId": 1, "status": "lost"}, "status"),
    ({"name": "Rex", "categoryId": 1, "status": None}, "status"),
    ({"name": "Rex", "categoryId": 1, "status": ["sold"]}, "status"),
    ({"name": "Rex", "categoryId": 1, "id": 99}, "id"),
    ({"name": "Rex", "categoryId": 1, "category_id": 1}, "category_id"),
]


@pytest.mark.parametrize(("body", "field"), INVALID)
async def test_invalid_field_is_400_naming_it(client: httpx.AsyncClient, body: dict, field: str) -> None:
    assert_error(await client.post("/pets", json=body), 400, "bad_request", mentions=field)
    assert len((await client.get("/pets?limit=100")).json()) == 12


async def test_name_at_the_limit_is_accepted(client: httpx.AsyncClient) -> None:
    name = "\U0001f436" * NAME_MAX_LENGTH
    response = await client.post("/pets", json={"name": name, "categoryId": 1})
    assert response.status_code == 201 and response.json()["name"] == name


@pytest.mark.parametrize(
    "raw",
    [
        b"{",
        b"nul",
        b"[1, 2]",
        b'"Rex"',
        b"null",
        b"42",
        b"[" * 5000 + b"]" * 5000,
        b"\xff\xfe{",
        b"{'name': 'Rex'}",
        b'{"name": "Rex", "categoryId": ' + b"9" * 5000 + b"}",
        b'{"name": "\\ud800", "categoryId": 1}',
        b'{"name": "Rex", "categoryId": NaN}',
    ],
)
async def test_malformed_or_non_object_json_is_400(client: httpx.AsyncClient, raw: bytes) -> None:
    response = await client.post("/pets", content=raw, headers={"Content-Type": "application/json"})
    assert_error(response, 400, "bad_request")


@pytest.mark.parametrize("content", [None, b""])
async def test_missing_or_empty_body_is_400(client: httpx.AsyncClient, content) -> None:
    response = await client.post("/pets", content=content, headers={"Content-Type": "application/json"})
    assert_error(response, 400, "bad_request", mentions="body")


async def test_missing_body_without_content_type_is_400(client: httpx.AsyncClient) -> None:
    assert_error(await client.post("/pets"), 400, "bad_request", mentions="body")


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded", "application/jsonx"])
async def test_wrong_content_type_is_415(client: httpx.AsyncClient, content_type: str | None) -> None:
    headers = {} if content_type is None else {"Content-Type": content_type}
    response = await client.post("/pets", content=b'{"name": "Rex", "categoryId": 1}', headers=headers)
    assert_error(response, 415, "unsupported_media_type", mentions="application/json")


async def test_content_type_parameters_are_fine(client: httpx.AsyncClient) -> None:
    body = json.dumps({"name": "Rex", "categoryId": 1}).encode()
    response = await client.post("/pets", content=body, headers={"Content-Type": "Application/JSON; charset=utf-8"})
    assert response.status_code == 201


async def test_body_over_the_cap_is_413(client: httpx.AsyncClient) -> None:
    body = {"name": "Rex", "categoryId": 1, "pad": "x" * 20_000}
    assert_error(await client.post("/pets", json=body), 413, "payload_too_large")


async def test_streamed_body_over_the_cap_is_413(client: httpx.AsyncClient) -> None:
    async def chunks():
        for _ in range(20):
            yield b" " * 1000

    response = await client.post("/pets", content=chunks(), headers={"Content-Type": "application/json"})
    assert "content-length" not in response.request.headers
    assert_error(response, 413, "payload_too_large")


async def test_unknown_query_parameter_on_create_is_400(client: httpx.AsyncClient) -> None:
    response = await client.post("/pets?dryRun=1", json={"name": "Rex", "categoryId": 1})
    assert_error(response, 400, "bad_request", mentions="dryRun")


HOSTILE = [
    "\x1b[31mred\x1b[0m",
    "\x1b]8;;http://evil\x07link\x1b]8;;\x07",
    "[bold]markup[/bold]",
    "nul\x00byte\x7f\x9b",
    "\u202eevil\u202c",
    "e\u0301\u0301 \U0001f600\U0001f3f3\ufe0f\u200d\U0001f308",
    "line\nbreak\ttab\r",
    '"quotes" \\ and </script>',
]


@pytest.mark.parametrize("name", HOSTILE)
async def test_hostile_names_are_stored_and_returned_literally(client: httpx.AsyncClient, name: str) -> None:
    created = (await client.post("/pets", json={"name": name, "categoryId": 1})).json()
    assert created["name"] == name
    assert (await client.get(f"/pets/{created['id']}")).json()["name"] == name
    assert (await client.get("/pets?limit=100")).json()[-1]["name"] == name
