"""The client's event hooks: attempts, retries and each exchange, told to the face that listens (issue 30);
no event holds the key."""

from __future__ import annotations

import json

import pytest
from api_support import BASE, CANARY
from faultserver import FaultServer

from petstore_api import PetStoreClient, RetryPolicy, Timeouts
from petstore_api.errors import TimeoutError
from petstore_api.events import AttemptStarted, ClientEvent, Exchange, Retrying


async def test_an_exchange_is_told_with_the_key_masked(client: PetStoreClient) -> None:
    events: list[ClientEvent] = []
    client.add_event_hook(events.append)
    client.add_event_hook(events.append)  # once only
    await client.create_pet(name="Rex", category_id=3)
    started, exchange = events
    assert isinstance(started, AttemptStarted) and (started.attempt, started.attempts) == (1, 3)
    assert isinstance(exchange, Exchange)
    assert (exchange.method, exchange.url, exchange.status) == ("POST", f"{BASE}/pets", 201)
    headers = dict(exchange.request_headers)
    assert headers["authorization"].startswith("Bearer ") and CANARY not in headers["authorization"]
    assert json.loads(exchange.request_body) == {"name": "Rex", "categoryId": 3}
    assert json.loads(exchange.response_body)["name"] == "Rex"
    assert CANARY not in repr(events)
    client.remove_event_hook(events.append)
    await client.list_pets()
    assert len(events) == 2


async def test_a_failing_hook_does_not_fail_the_call(client: PetStoreClient) -> None:
    def broken(event: ClientEvent) -> None:
        raise RuntimeError("a listener's bug")

    client.add_event_hook(broken)
    page = await client.list_pets()
    assert page.pets == []


async def test_a_service_that_never_answers_is_retried_and_each_retry_told(faults: FaultServer) -> None:
    """The fault server accepts and never answers: every attempt ends in a read timeout."""
    events: list[ClientEvent] = []
    client = PetStoreClient(
        base_url=faults.url("hang"),
        api_key=CANARY,
        retry=RetryPolicy(attempts=3, backoff=0.0, jitter=False),
        timeouts=Timeouts(connect=1.0, read=0.2, write=1.0, pool=1.0, total=10.0),
        event_hooks=[events.append],
    )
    async with client:
        with pytest.raises(TimeoutError):
            await client.list_pets()
    retries = [event for event in events if isinstance(event, Retrying)]
    assert [(r.attempt, r.attempts) for r in retries] == [(2, 3), (3, 3)]
    assert all("read timeout" in r.reason for r in retries)
    assert [e.attempt for e in events if isinstance(e, AttemptStarted)] == [1, 2, 3]
    assert not any(isinstance(event, Exchange) for event in events)
