"""The client API under every fault of the fault server (plus a refused connection).

Each operation either returns or raises a ``PetStoreError`` whose ``str`` is one
line naming the cause; no httpx exception escapes or hides in the chain; the
canary key is in no message, repr or formatted traceback.
"""

from __future__ import annotations

import asyncio
import re
import traceback

import httpx
import pytest
from faultserver import FAULTS, FaultServer, refused_url

from petstore_api import PetStoreClient, RetryPolicy, Timeouts
from petstore_api.errors import PetStoreError

from .faults_table import ADD_SUCCEEDS, EXPECT
from .support import CANARY, assert_no_secret

pytestmark = pytest.mark.slow


def test_every_fault_has_an_expectation() -> None:
    assert sorted(EXPECT) == sorted(FAULTS)


def _chain(exc: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in found:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def _check_error(exc: BaseException) -> str:
    assert isinstance(exc, PetStoreError), f"{type(exc).__module__}.{type(exc).__name__} escaped: {exc}"
    assert not [e for e in _chain(exc) if isinstance(e, httpx.HTTPError | httpx.InvalidURL)], "httpx in the chain"
    text = str(exc)
    assert text and "\n" not in text and text == text.strip()
    assert_no_secret(text, repr(exc), "".join(traceback.format_exception(exc)), str(vars(exc)))
    return text


@pytest.mark.parametrize("fault", FAULTS)
async def test_client_under_fault(faults: FaultServer, fault: str) -> None:
    url = refused_url() if fault == "refuse" else faults.url(fault)
    expect = EXPECT[fault]
    client = PetStoreClient(
        base_url=url,
        api_key=CANARY,
        timeouts=Timeouts(connect=1.0, read=5.0, total=1.0),
        retry=RetryPolicy(attempts=3, backoff=0.05, retry_after_cap=1.0),
    )
    async with client:
        listed, added, got, orders = await asyncio.gather(
            client.list_pets(),
            client.create_pet(name="Rex", category_id=3),
            client.get_pet(1),
            client.list_orders(),
            return_exceptions=True,
        )
    assert_no_secret(repr(client))
    if expect.error is None:
        assert not isinstance(listed, BaseException), listed
        if fault == "unknown_status_and_extra":  # shown as it came, not refused
            assert listed.pets[0].status_text == "adopted" and listed.raw[0]["colour"] == "brown"
    else:
        assert isinstance(listed, expect.error), repr(listed)
        assert re.search(expect.cause, _check_error(listed)), str(listed)
        if expect.status:
            assert listed.status == expect.status and listed.error.code == expect.code
    if fault in ADD_SUCCEEDS:
        assert not isinstance(added, BaseException) and added.pet.id == 42
    else:
        assert isinstance(added, BaseException)
    for outcome in (added, got, orders):
        if isinstance(outcome, BaseException):
            _check_error(outcome)
