"""A failed /add leaves nothing behind: no pet on the service, nothing recorded as created in the session.

The session is what every face (chat, run, TUI) builds its results from: after
a failed /add its ``last_pet_id`` (``$last``), ``seen_ids`` (completion, TUI
rows) and history say nothing was created. With the real service, a 400
creates nothing, and the Idempotency-Key of a refused body is not burnt.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest
from faultserver import FaultServer, refused_url

from bot_commands.commands import default_registry
from bot_commands.results import EnvInfo, PetCreated, PetList
from bot_commands.session import CommandSession
from petstore_api import PetStoreClient, RetryPolicy, Timeouts
from petstore_api.errors import PetStoreError

from .proxy import Proxy
from .support import CANARY, MASKED, all_pets, named

REGISTRY = default_registry()

pytestmark = pytest.mark.slow


def _session(url: str) -> CommandSession:
    client = PetStoreClient(
        base_url=url,
        api_key=CANARY,
        timeouts=Timeouts(read=5.0, total=1.0),
        retry=RetryPolicy(backoff=0.01, retry_after_cap=1.0),
    )
    return CommandSession(client, registry=REGISTRY, env=EnvInfo(env="custom", base_url=url, masked_key=MASKED))


@pytest.fixture
def proxy(service: tuple[str, object]) -> Iterator[Proxy]:
    with Proxy(service[0]) as p:
        yield p


def _assert_nothing_recorded(session: CommandSession, *, last: int | None, seen: list[int], line: str) -> None:
    assert session.last_pet_id == last
    assert session.seen_ids == seen
    assert session.last_outcome is not None and not session.last_outcome.ok
    assert session.entries[-1].line == line and session.entries[-1].ok is False


@pytest.mark.parametrize("plan", [["error_500"], ["drop_before"] * 3], ids=["500", "drop"])
async def test_failed_add_on_the_real_service_leaves_no_phantom(proxy: Proxy, service, plan: list[str]) -> None:
    ghost = f"Ghost-{uuid.uuid4().hex[:8]}"
    session = _session(proxy.url())
    async with session.client:
        seed = await session.execute(f"/add Seed-{ghost} --category 1")
        assert isinstance(seed, PetCreated)
        before = len(await all_pets(service[0]))
        proxy.plan = list(plan)
        line = f"/add {ghost} --category 1"
        with pytest.raises(PetStoreError):
            await session.execute(line)
        _assert_nothing_recorded(session, last=seed.pet.id, seen=[seed.pet.id], line=line)
        assert session.expand("/get $last") == f"/get {seed.pet.id}"
        listed = await session.execute("/list --all")
        assert isinstance(listed, PetList) and ghost not in [p.name for p in listed.pets]
    assert await named(service[0], ghost) == []
    assert len(await all_pets(service[0])) == before


@pytest.mark.parametrize(
    "fault", ["status_500", "close_mid_body", "hang", "truncated_json", "error_missing_fields", "refuse"]
)
async def test_failed_add_under_faults_records_nothing(faults: FaultServer, fault: str) -> None:
    session = _session(refused_url() if fault == "refuse" else faults.url(fault))
    async with session.client:
        with pytest.raises(PetStoreError):
            await session.execute("/add Ghost --category 1")
    _assert_nothing_recorded(session, last=None, seen=[], line="/add Ghost --category 1")


BAD_BODIES = [
    {"categoryId": 1},
    {"name": "x" * 10_000, "categoryId": 1},
    {"name": "", "categoryId": 1},
    {"name": "Rex", "categoryId": "3"},
    {"name": "Rex", "categoryId": 2**63},
    {"name": "Rex", "categoryId": 1, "status": "adopted"},
    {"name": "Rex", "categoryId": 1, "id": 5},
    ["Rex", 1],
]


async def test_a_400_from_the_real_service_creates_nothing(service) -> None:
    url = service[0]
    before = await all_pets(url)
    key = f"k-{uuid.uuid4().hex}"
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {CANARY}"}) as http:
        for body in BAD_BODIES:
            response = await http.post("/pets", json=body, headers={"Idempotency-Key": key})
            assert response.status_code == 400 and response.json()["code"] == "bad_request", body
        assert await all_pets(url) == before
        good = {"name": f"Fixed-{key}", "categoryId": 1}
        created = await http.post("/pets", json=good, headers={"Idempotency-Key": key})
        again = await http.post("/pets", json=good, headers={"Idempotency-Key": key})
    assert created.status_code == 201 and again.json() == created.json()  # the refused bodies burnt no key
    assert await all_pets(url) == [*before, created.json()]
