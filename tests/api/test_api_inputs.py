"""Validation before sending, and tolerant parsing of what comes back."""

from __future__ import annotations

import json

import pytest
from api_support import PET, Script, jresp

from petstore_api.errors import InputError
from petstore_api.models import INT64_MAX, NewPet, Pet, PetStatus


def _never(request):  # pragma: no cover - reaching it fails the test
    raise AssertionError(f"a request was sent: {request.method} {request.url}")


_STATUSES = "use one of available, pending, sold"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"limit": 0}, "limit must be a whole number from 1 to 100, not 0"),
        ({"limit": 101}, "limit must be a whole number from 1 to 100, not 101"),
        ({"limit": True}, "limit must be a whole number from 1 to 100, not True"),
        ({"limit": "five"}, "limit must be a whole number from 1 to 100, not 'five'"),
        ({"limit": 2.0}, "limit must be a whole number from 1 to 100, not 2.0"),
        ({"status": "availabel"}, f"unknown status 'availabel' (did you mean available?); {_STATUSES}"),
        ({"status": "adopted"}, f"unknown status 'adopted'; {_STATUSES}"),
        ({"status": 1}, f"unknown status 1; {_STATUSES}"),
    ],
)
async def test_list_inputs_are_checked_before_sending(mock_client, kwargs, message) -> None:
    client = mock_client(_never)
    with pytest.raises(InputError) as info:
        await client.list_pets(**kwargs)
    assert str(info.value) == message and info.value.field == next(iter(kwargs))
    with pytest.raises(InputError):
        async for _ in client.iter_pages(**kwargs):
            pass


async def test_list_sends_checked_parameters(mock_client) -> None:
    script = Script(jresp(200, []))
    await mock_client(script).list_pets(limit=100, status=PetStatus.SOLD)
    await mock_client(script).list_pets(limit=1, status="pending")
    await mock_client(script).list_pets()
    assert [str(r.url) for r in script.requests] == [
        "http://127.0.0.1/v1/pets?limit=100&status=sold",
        "http://127.0.0.1/v1/pets?limit=1&status=pending",
        "http://127.0.0.1/v1/pets",
    ]


@pytest.mark.parametrize("bad", [True, "one", 1.0, None, 2**63, -(2**63) - 1])
async def test_pet_id_must_be_int64(mock_client, bad) -> None:
    with pytest.raises(InputError, match="pet id (must be a whole number|is required|.* is outside the int64)") as info:
        await mock_client(_never).get_pet(bad)
    assert info.value.field == "pet_id"


@pytest.mark.parametrize(
    ("kwargs", "field", "message"),
    [
        ({"category_id": 1}, "name", "the name is required"),
        ({"name": "Rex"}, "category_id", "category id is required"),
        ({"name": "", "category_id": 1}, "name", "the name must not be blank"),
        ({"name": "x" * 201, "category_id": 1}, "name", "the name is 201 characters long; at most 200"),
        ({"name": 5, "category_id": 1}, "name", "the name must be text, not 5"),
        ({"name": "Rex", "category_id": "one"}, "category_id", "category id must be a whole number, not 'one'"),
        ({"name": "Rex", "category_id": True}, "category_id", "category id must be a whole number, not True"),
        ({"name": "Rex", "category_id": 2**63}, "category_id", "category id 9223372036854775808 is outside"),
        ({"name": "Rex", "category_id": 1, "status": "lost"}, "status", f"unknown status 'lost'; {_STATUSES}"),
        ({"name": "\ud800", "category_id": 1}, "name", "the name must be valid Unicode text"),
        (
            {"name": "Rex", "category_id": 1, "idempotency_key": "has space"},
            "idempotency_key",
            "idempotency key must be 1 to 255 visible ASCII characters",
        ),
        ({"name": "Rex", "category_id": 1, "idempotency_key": ""}, "idempotency_key", "idempotency key must be"),
    ],
)
async def test_create_inputs_are_checked_before_sending(mock_client, kwargs, field, message) -> None:
    with pytest.raises(InputError) as info:
        await mock_client(_never).create_pet(**kwargs)
    assert str(info.value).startswith(message) and info.value.field == field
    assert "\n" not in str(info.value)


async def test_create_refuses_both_model_and_fields(mock_client) -> None:
    with pytest.raises(InputError, match="either a NewPet or"):
        await mock_client(_never).create_pet(NewPet(name="a", category_id=1), name="b")
    with pytest.raises(InputError, match="pet must be a NewPet"):
        await mock_client(_never).create_pet({"name": "a", "categoryId": 1})


async def test_create_sends_the_wire_body(mock_client) -> None:
    script = Script(jresp(201, {**PET, "id": 2**62}))
    pet = (await mock_client(script).create_pet(name="Rex", category_id=INT64_MAX, status="sold")).pet
    request = script.requests[0]
    assert json.loads(request.content) == {"name": "Rex", "categoryId": INT64_MAX, "status": "sold"}
    assert request.headers["Content-Type"] == "application/json" and pet.id == 2**62
    await mock_client(script).create_pet(name="Tom", category_id=1)
    assert json.loads(script.requests[1].content) == {"name": "Tom", "categoryId": 1}


async def test_unknown_status_and_extra_fields_are_kept(mock_client) -> None:
    odd = {"id": 7, "name": "Odd", "categoryId": 1, "status": "adopted", "colour": "brown", "tags": [1]}
    page = await mock_client(Script(jresp(200, [PET, odd]))).list_pets()
    pet = page.pets[1]
    assert pet.status == "adopted" and pet.status_text == "adopted" and not pet.status_known
    assert pet.model_extra == {"colour": "brown", "tags": [1]}
    assert pet.to_wire() == odd and page.raw == [PET, odd]
    assert page.pets[0].status is PetStatus.AVAILABLE and page.pets[0].status_known


async def test_pet_without_status_round_trips(mock_client) -> None:
    bare = {"id": 3, "name": "Bare", "categoryId": 9}
    got = await mock_client(Script(jresp(200, bare))).get_pet(3)
    assert got.pet.status is None and got.pet.to_wire() == bare and got.raw == bare
    assert Pet.model_validate(got.pet.to_wire()) == got.pet
