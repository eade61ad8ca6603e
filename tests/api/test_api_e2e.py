"""Every operation against the real service (petstore_server over httpx.ASGITransport)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import httpx
import pytest
from api_support import BASE, CANARY

from petstore_api import PetStoreClient
from petstore_api.errors import APIError, AuthenticationError, NotFoundError, ProtocolError
from petstore_api.models import NewPet, Pet, PetStatus


async def _add(client: PetStoreClient, count: int, **fields: Any) -> list[Pet]:
    return [(await client.create_pet(name=f"pet{i}", category_id=i, **fields)).pet for i in range(count)]


async def test_create_then_get_round_trip(client: PetStoreClient) -> None:
    answer = await client.create_pet(name="Rex", category_id=3, status="available")
    created = answer.pet
    assert isinstance(created.id, int) and answer.replayed is False
    assert (created.name, created.category_id, created.status) == ("Rex", 3, PetStatus.AVAILABLE)

    got = await client.get_pet(created.id)
    assert got.pet == created
    assert got.raw == {"id": created.id, "name": "Rex", "categoryId": 3, "status": "available"}


async def test_create_accepts_a_new_pet_model(client: PetStoreClient) -> None:
    pet = (await client.create_pet(NewPet(name="Tom", category_id=1))).pet
    assert pet.name == "Tom" and pet.status is None


async def test_get_pet_carries_the_deprecation_notice_from_headers(client: PetStoreClient) -> None:
    pet = (await client.create_pet(name="Rex", category_id=3)).pet
    notice = (await client.get_pet(pet.id)).notice
    assert notice.operation == "getPet"
    assert notice.from_headers is True
    assert notice.sunset == datetime(2030, 12, 5, tzinfo=UTC)
    assert notice.deprecated_since == datetime(2025, 1, 1, tzinfo=UTC)
    assert notice.successor == "http://127.0.0.1/v1/pets"
    assert "5 December 2030" in notice.message


async def test_list_pets_filters_and_limits(client: PetStoreClient) -> None:
    await _add(client, 3, status="sold")
    await _add(client, 2, status="pending")
    sold = await client.list_pets(status="sold")
    assert [p.status for p in sold.pets] == [PetStatus.SOLD] * 3
    assert sold.next_url is None and sold.raw == [p.to_wire() for p in sold.pets]

    page = await client.list_pets(limit=2)
    assert len(page.pets) == 2 and page.has_next


async def test_pages_follow_link_next_to_the_end(client: PetStoreClient) -> None:
    made = await _add(client, 7)
    pages = [page async for page in client.iter_pages(limit=3)]
    assert [len(p.pets) for p in pages] == [3, 3, 1]
    assert [pet.id for page in pages for pet in page.pets] == [p.id for p in made]
    assert pages[-1].next_url is None

    second = await client.next_page(pages[0])
    assert second is not None and second.pets == pages[1].pets
    assert await client.next_page(pages[-1]) is None


async def test_pages_keep_the_status_filter(client: PetStoreClient) -> None:
    await _add(client, 3, status="sold")
    await _add(client, 3, status="pending")
    pets = [pet async for page in client.iter_pages(limit=2, status=PetStatus.PENDING) for pet in page.pets]
    assert [p.status_text for p in pets] == ["pending"] * 3


async def test_list_orders_is_plain_json(client: PetStoreClient) -> None:
    assert await client.list_orders() == []


async def test_wrong_key_is_an_authentication_error(service: Any) -> None:
    app, _ = service
    transport = httpx.ASGITransport(app=app)
    async with PetStoreClient(base_url=BASE, api_key="sk-wrong-000000000000", transport=transport) as c:
        with pytest.raises(AuthenticationError) as info:
            await c.list_pets()
    assert info.value.status == 401 and info.value.code == "unauthorized"
    assert info.value.error.message == "invalid API key"


async def test_no_key_is_an_authentication_error(service: Any) -> None:
    app, _ = service
    async with PetStoreClient(base_url=BASE, transport=httpx.ASGITransport(app=app)) as c:
        with pytest.raises(AuthenticationError):
            await c.list_orders()


async def test_unknown_pet_is_not_found(client: PetStoreClient) -> None:
    with pytest.raises(NotFoundError) as info:
        await client.get_pet(987654)
    assert info.value.error.status == 404 and "987654" in str(info.value)


async def test_reused_idempotency_key_is_an_api_error(client: PetStoreClient) -> None:
    # A key reused with another body is refused (422); its Error body is kept.
    await client.create_pet(name="A", category_id=1, idempotency_key="same-key")
    with pytest.raises(APIError) as info:
        await client.create_pet(name="B", category_id=1, idempotency_key="same-key")
    assert info.value.code == "idempotency_key_reused" and info.value.status == 422


async def test_same_idempotency_key_replays_and_creates_nothing(client: PetStoreClient) -> None:
    first = await client.create_pet(name="Once", category_id=1, idempotency_key="k-1")
    again = await client.create_pet(name="Once", category_id=1, idempotency_key="k-1")
    assert again.pet == first.pet and (first.replayed, again.replayed) == (False, True)
    assert [p.name for p in (await client.list_pets()).pets] == ["Once"]


async def test_dropped_connection_after_commit_is_retried_under_the_same_key(
    service: Any, retry: Any, sleeps: Any
) -> None:
    """The service commits, the answer is lost, the client retries: exactly one pet exists."""
    app, store = service
    inner = httpx.ASGITransport(app=app)
    keys: list[str] = []

    class DropFirstAnswer(httpx.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            response = await inner.handle_async_request(request)
            if request.method == "POST":
                keys.append(request.headers["Idempotency-Key"])
                if len(keys) == 1:
                    await response.aclose()
                    raise httpx.ReadError("connection reset by peer")
            return response

    async with PetStoreClient(base_url=BASE, api_key=CANARY, transport=DropFirstAnswer(), retry=retry) as c:
        pet = (await c.create_pet(name="Lost", category_id=2)).pet
        assert [p.id for p in (await c.list_pets()).pets] == [pet.id]
    assert len(keys) == 2 and keys[0] == keys[1]
    assert len(sleeps.delays) == 1


async def test_next_link_is_resolved_and_same_origin(client: PetStoreClient) -> None:
    await _add(client, 3)
    page = await client.list_pets(limit=1)
    assert page.next_url is not None and page.next_url.startswith("http://127.0.0.1/v1/pets?")


async def test_sandbox_end_to_end(tmp_path: Any) -> None:
    from petstore_server.sandbox import Sandbox

    sandbox = Sandbox.open(tmp_path)
    try:
        transport = httpx.ASGITransport(app=sandbox.app)
        async with PetStoreClient(base_url=BASE, api_key=sandbox.api_key, transport=transport) as c:
            pets = [pet async for page in c.iter_pages(limit=5) for pet in page.pets]
            assert len(pets) >= 12
            assert {p.status_text for p in pets} >= {"available", "pending", "sold"}
            got = await c.get_pet(pets[0].id)
            assert got.pet == pets[0]
    finally:
        sandbox.close()


def test_sunset_default_is_the_spec_date() -> None:
    from petstore_api.models import SUNSET_DATE

    assert SUNSET_DATE == date(2030, 12, 5)


async def test_next_page_refuses_another_origin(client: PetStoreClient) -> None:
    from petstore_api.models import PetPage

    with pytest.raises(ProtocolError, match="another origin"):
        await client.next_page(PetPage(pets=[], next_url="https://evil.example/v1/pets?cursor=1"))


async def test_set_api_key_after_a_401(service: Any) -> None:
    from petstore_api.errors import ConfigError

    app, _ = service
    async with PetStoreClient(
        base_url=BASE, api_key="sk-wrong-key-0000", transport=httpx.ASGITransport(app=app)
    ) as client:
        with pytest.raises(AuthenticationError):
            await client.list_pets()
        client.set_api_key(CANARY)
        assert (await client.list_pets()).pets == []
        assert client.masked_api_key == "sk-...cdef"
        with pytest.raises(ConfigError):
            client.set_api_key("  ")


async def test_set_api_key_keeps_refusing_plain_http_to_a_remote_host() -> None:
    from petstore_api.errors import InsecureTransportError

    async with PetStoreClient(base_url="http://pets.example/v1") as client:
        with pytest.raises(InsecureTransportError):
            client.set_api_key("sk-live-123456789012")
        assert not client.has_api_key
