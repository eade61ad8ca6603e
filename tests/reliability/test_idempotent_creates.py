"""Idempotent creates over a real socket: the service commits, the answer is lost, the client retries.

A proxy on loopback sits in front of ``python -m petstore_server``: it relays
the first POST, reads the 201 (so the pet is committed), then closes the
client's connection without relaying it. The client retries under the same
Idempotency-Key, the service replays its stored answer: exactly one pet.
(tests/api covers the same rule in-process and against the fault server.)
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator

import pytest

from petstore_api import PetStoreClient, RetryPolicy
from petstore_api.errors import TransportError

from .proxy import Proxy
from .support import CANARY, named, petstore

pytestmark = pytest.mark.slow


@pytest.fixture
def proxy(service: tuple[str, object]) -> Iterator[Proxy]:
    with Proxy(service[0]) as p:
        yield p


def _unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


async def test_lost_answer_after_commit_is_retried_under_the_same_key(proxy: Proxy, service) -> None:
    name = _unique("Once")
    proxy.plan = ["drop_after"]
    async with PetStoreClient(base_url=proxy.url(), api_key=CANARY, retry=RetryPolicy(backoff=0.01)) as client:
        created = await client.create_pet(name=name, category_id=7)
    first, second = proxy.posts()
    assert first.action == "drop_after" and first.status == 201  # committed, answer lost
    assert first.headers["idempotency-key"] == second.headers["idempotency-key"]
    assert second.status == 201 and second.response_headers.get("idempotent-replayed") == "true"
    stored = await named(service[0], name)
    assert stored == [created.pet.to_wire()]  # exactly one, and the one the client was told about
    assert created.replayed is True  # the service's Idempotent-Replayed header, surfaced


async def test_two_lost_answers_still_make_one_pet(proxy: Proxy, service) -> None:
    name = _unique("Twice")
    proxy.plan = ["drop_after", "drop_after"]
    async with PetStoreClient(base_url=proxy.url(), api_key=CANARY, retry=RetryPolicy(backoff=0.01)) as client:
        pet = (await client.create_pet(name=name, category_id=7)).pet
    assert len({e.headers["idempotency-key"] for e in proxy.posts()}) == 1 and len(proxy.posts()) == 3
    assert [p["id"] for p in await named(service[0], name)] == [pet.id]


async def test_without_retries_the_loss_is_reported_not_hidden(proxy: Proxy, service) -> None:
    """One attempt only: the client says the connection broke (it cannot know the pet exists)."""
    name = _unique("Unsure")
    proxy.plan = ["drop_after"]
    async with PetStoreClient(base_url=proxy.url(), api_key=CANARY, retry=RetryPolicy.never()) as client:
        with pytest.raises(TransportError, match="broke off"):
            await client.create_pet(name=name, category_id=7)
    assert len(await named(service[0], name)) == 1


def test_petstore_run_add_through_the_lossy_proxy(proxy: Proxy, service, tmp_path) -> None:
    name = _unique("Cli")
    proxy.plan = ["drop_after"]
    ran = petstore(tmp_path, "run", "--base-url", proxy.url(), "--json", "-c", f"/add {name} --category 2")
    assert ran.code == 0, ran.err
    result = json.loads(ran.out)["result"]
    assert len(proxy.posts()) == 2
    assert asyncio.run(named(service[0], name)) == [result]
    assert json.loads(ran.out)["replayed"] is True  # the retry's answer was the service's replay


def test_petstore_run_says_the_retried_add_created_nothing_new_and_audits_it(proxy: Proxy, service, tmp_path) -> None:
    """The first answer is lost after the commit; the retry gets the service's replay: one pet, and the person and
    the audit log are told the second answer created nothing new."""
    name = _unique("Told")
    proxy.plan = ["drop_after"]
    audit = tmp_path / "audit.ndjson"
    ran = petstore(
        tmp_path, "--audit-log", str(audit), "run", "--base-url", proxy.url(), "-c", f"/add {name} --category 2"
    )
    assert ran.code == 0, ran.err
    (stored,) = asyncio.run(named(service[0], name))
    said = f"Pet {stored['id']} was already added by this same request; nothing new was created"
    assert said in ran.err and f"Pet {stored['id']}" in ran.out and "Added" not in ran.out
    (line,) = [json.loads(text) for text in audit.read_text(encoding="utf-8").splitlines()]
    assert (line["pet_id"], line["applied"], line["replayed"]) == (stored["id"], "yes", True)
