"""Retry rules, backoff, Retry-After and the total deadline (MockTransport; sleeps are recorded, not slept)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest
from api_support import PET, Script, SleepRecorder, jresp

from petstore_api import RetryPolicy, Timeouts
from petstore_api.errors import (
    BadRequestError,
    ConnectError,
    RateLimitedError,
    ServerError,
    TimeoutError,
    TransportError,
)
from petstore_api.policy import parse_retry_after

ERR = {"code": "x", "message": "busy", "status": 503}


async def test_503_then_200_is_retried_after_backoff(mock_client, sleeps: SleepRecorder) -> None:
    script = Script(jresp(503, ERR), jresp(200, [PET]))
    page = await mock_client(script).list_pets()
    assert [p.id for p in page.pets] == [1]
    assert len(script.requests) == 2 and sleeps.delays == [0.25]


@pytest.mark.parametrize("status", [502, 503, 504, 429])
async def test_retryable_statuses_get_the_attempt_budget(mock_client, sleeps: SleepRecorder, status: int) -> None:
    script = Script(jresp(status, {**ERR, "status": status}))
    with pytest.raises(RateLimitedError if status == 429 else ServerError):
        await mock_client(script).list_pets()
    assert len(script.requests) == 3
    assert sleeps.delays == [0.25, 0.5]  # exponential, no jitter in the fixture policy


async def test_backoff_is_capped_and_jittered() -> None:
    policy = RetryPolicy(backoff=1.0, backoff_max=4.0, jitter=False)
    assert [policy.backoff_delay(n) for n in (1, 2, 3, 4, 10, 1000)] == [1.0, 2.0, 4.0, 4.0, 4.0, 4.0]
    jittered = RetryPolicy(backoff=1.0, backoff_max=4.0)
    assert all(0.0 <= jittered.backoff_delay(3) <= 4.0 for _ in range(200))


async def test_500_is_not_retried(mock_client, sleeps: SleepRecorder) -> None:
    script = Script(jresp(500, {"code": "internal_error", "message": "boom", "status": 500}))
    with pytest.raises(ServerError) as info:
        await mock_client(script).list_pets()
    assert len(script.requests) == 1 and sleeps.delays == []
    assert info.value.code == "internal_error"


async def test_429_with_retry_after_seconds(mock_client, sleeps: SleepRecorder) -> None:
    script = Script(jresp(429, {**ERR, "status": 429}, **{"Retry-After": "7"}), jresp(200, [PET]))
    await mock_client(script).list_pets()
    assert sleeps.delays == [7.0]


async def test_503_with_retry_after_http_date(mock_client, sleeps: SleepRecorder) -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=6), usegmt=True)
    script = Script(jresp(503, ERR, **{"Retry-After": when}), jresp(200, [PET]))
    await mock_client(script).list_pets()
    assert len(sleeps.delays) == 1 and 4.0 < sleeps.delays[0] <= 6.0


async def test_retry_after_beyond_the_cap_gives_up_at_once(mock_client, sleeps: SleepRecorder) -> None:
    script = Script(jresp(429, {"code": "slow", "message": "slow down", "status": 429}, **{"Retry-After": "3600"}))
    with pytest.raises(RateLimitedError, match="slow down"):
        await mock_client(script).list_pets()
    assert len(script.requests) == 1 and sleeps.delays == []


async def test_retry_after_beyond_the_deadline_gives_up(mock_client, sleeps: SleepRecorder) -> None:
    script = Script(jresp(503, ERR, **{"Retry-After": "5"}))
    with pytest.raises(ServerError):
        await mock_client(script, timeouts=Timeouts(total=3.0)).list_pets()
    assert len(script.requests) == 1 and sleeps.delays == []


async def test_connect_failures_are_retried_then_reported(mock_client, sleeps: SleepRecorder) -> None:
    script = Script(httpx.ConnectError("[Errno 111] Connection refused"))
    with pytest.raises(ConnectError, match=r"^cannot connect to 127\.0\.0\.1: connection refused$") as info:
        await mock_client(script).list_pets()
    assert len(script.requests) == 3 and sleeps.delays == [0.25, 0.5]
    assert info.value.host == "127.0.0.1" and info.value.__cause__ is None


async def test_read_timeout_on_get_is_retried(mock_client, sleeps: SleepRecorder) -> None:
    script = Script(httpx.ReadTimeout("timed out"), jresp(200, [PET]))
    await mock_client(script).list_pets()
    assert len(script.requests) == 2


async def test_read_timeout_exhausted_names_host_and_budget(mock_client) -> None:
    script = Script(httpx.ReadTimeout("timed out"))
    with pytest.raises(TimeoutError, match=r"127\.0\.0\.1 sent nothing for 10 s \(read timeout\)"):
        await mock_client(script).list_pets()


async def test_post_retries_keep_the_same_idempotency_key(mock_client, sleeps: SleepRecorder) -> None:
    script = Script(httpx.ReadError("reset"), jresp(503, ERR), jresp(201, PET))
    pet = (await mock_client(script).create_pet(name="Rex", category_id=3)).pet
    assert pet.id == 1
    keys = {r.headers["Idempotency-Key"] for r in script.requests}
    assert len(script.requests) == 3 and len(keys) == 1
    assert sleeps.delays == [0.25, 0.5]


async def test_post_uses_the_given_idempotency_key(mock_client) -> None:
    script = Script(jresp(201, PET))
    await mock_client(script).create_pet(name="Rex", category_id=3, idempotency_key="my-key-1")
    assert script.requests[0].headers["Idempotency-Key"] == "my-key-1"


@pytest.mark.parametrize(("status", "error"), [(400, BadRequestError), (500, ServerError)])
async def test_post_is_not_retried_on_400_or_500(mock_client, sleeps: SleepRecorder, status, error) -> None:
    script = Script(jresp(status, {"code": "no", "message": "refused", "status": status}))
    with pytest.raises(error):
        await mock_client(script).create_pet(name="Rex", category_id=3)
    assert len(script.requests) == 1 and sleeps.delays == []


async def test_post_without_key_is_not_retried_after_it_may_have_been_sent(sleeps: SleepRecorder) -> None:
    """The sender's rule for a non-idempotent call (our client never makes one, but the rule must hold)."""
    from petstore_api._http import Call, Sender

    script = Script(httpx.ReadError("reset"))
    async with httpx.AsyncClient(transport=httpx.MockTransport(script)) as http:
        sender = Sender(client=http, timeouts=Timeouts(), retry=RetryPolicy(sleep=sleeps), scrub=str)
        call = Call(method="POST", url=httpx.URL("http://127.0.0.1/v1/pets"), label="POST /pets", json={})
        with pytest.raises(TransportError, match="broke off"):
            await sender.send(call)
        assert len(script.requests) == 1
        script.replies = [httpx.ConnectError("refused"), jresp(201, PET)]  # never sent: safe to retry
        assert (await sender.send(call)).status == 201


async def test_never_policy_makes_one_attempt(mock_client, sleeps: SleepRecorder) -> None:
    script = Script(jresp(503, ERR))
    with pytest.raises(ServerError):
        await mock_client(script, retry=RetryPolicy.never()).list_pets()
    assert len(script.requests) == 1


class Trickle(httpx.AsyncByteStream):
    """A body that never ends: one byte at a time, slowly."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield b"["
        while True:
            await asyncio.sleep(0.01)
            yield b" "


async def test_total_deadline_beats_a_trickling_body(mock_client) -> None:
    script = Script(httpx.Response(200, headers={"Content-Type": "application/json"}, stream=Trickle()))
    client = mock_client(script, timeouts=Timeouts(total=0.3))
    with pytest.raises(TimeoutError, match=r"GET /pets: no complete answer from 127\.0\.0\.1 within 0\.3 s"):
        await client.list_pets()


async def test_total_deadline_covers_backoff_sleeps(mock_client) -> None:
    """A sleep that overruns (here: 60 s for any request) is cut off by the deadline too."""

    async def slow_sleep(seconds: float) -> None:
        await asyncio.sleep(60)

    script = Script(jresp(503, ERR), jresp(200, [PET]))
    client = mock_client(
        script, timeouts=Timeouts(total=0.2), retry=RetryPolicy(sleep=slow_sleep, backoff=0.01, jitter=False)
    )
    with pytest.raises(TimeoutError, match="total time limit"):
        await client.list_pets()
    assert len(script.requests) == 1


async def test_retries_stop_when_the_deadline_is_near(mock_client) -> None:
    """Immediate retries with a huge budget end by the deadline with the service's own error."""
    script = Script(jresp(503, ERR, **{"Retry-After": "0"}))
    client = mock_client(script, timeouts=Timeouts(total=0.2), retry=RetryPolicy(attempts=10**9))
    with pytest.raises((ServerError, TimeoutError)):
        await client.list_pets()
    assert len(script.requests) > 1


def test_parse_retry_after() -> None:
    now = datetime(2030, 1, 1, tzinfo=UTC)
    assert parse_retry_after("120", now=now) == 120.0
    assert parse_retry_after(" 0 ", now=now) == 0.0
    assert parse_retry_after("Tue, 01 Jan 2030 00:00:30 GMT", now=now) == 30.0
    assert parse_retry_after("Mon, 31 Dec 2029 00:00:00 GMT", now=now) == 0.0  # past: now
    for junk in (None, "", "soon", "-5", "1.5", "²", "Tue, 99 Foo 2030"):
        assert parse_retry_after(junk, now=now) is None


def test_policies_reject_nonsense() -> None:
    for bad in ({"attempts": 0}, {"attempts": True}, {"backoff": -1}, {"retry_after_cap": float("inf")}):
        with pytest.raises(ValueError):
            RetryPolicy(**bad)
    for bad in ({"total": 0}, {"read": -1.0}, {"connect": float("nan")}, {"pool": True}):
        with pytest.raises(ValueError):
            Timeouts(**bad)
    assert Timeouts(total=None).total is None
