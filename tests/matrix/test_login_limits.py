"""The Matrix bot on a Synapse with its default login limit (``rc_login``: a burst of 5, then one login per ~5 min):
restarted more often than that, it answers after every start, because it logs in with its password once and keeps
the access token in its state dir; a token revoked (logged out) is replaced by one login on the same device, whose
keys are published again (a logout deletes them). And a process that cannot log in, or whose syncs fail, does not
hold the lease of its account.
"""

from __future__ import annotations

import asyncio
import json
import logging
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from matrix.bot_process import ask, room_with
from matrix.conftest import BotRunner, _unavailable, register, upper
from matrix.cs_client import MatrixUser
from matrix.fault_proxy import FaultProxy
from matrix.synapse_server import SynapseServer, SynapseUnavailable
from petstore_bot.replicas import Leadership
from petstore_state.lease import open_lease

pytestmark = pytest.mark.slow

#: More starts than Synapse's default login burst (5) allows.
STARTS = 7


@pytest.fixture(scope="module")
def limited() -> Iterator[SynapseServer]:
    """A Synapse of this module's own with Synapse's default login limits (the session's raises them)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="synapse-rc-login-") as root:
        server = None
        try:
            server = SynapseServer.create(Path(root), default_login_limits=True)
            server.start()
        except (SynapseUnavailable, OSError) as exc:
            _unavailable(str(exc))
        assert server is not None
        yield server
        server.stop()


def _person(server: SynapseServer, name: str) -> MatrixUser:
    """A registered user on the session registration gave (no login: the login limit is the bot's alone here)."""
    user_id, token = server.register_session(localpart=f"{name}-{time.monotonic_ns()}", password="pw-" + name)
    return MatrixUser(base_url=server.url, user_id=user_id, access_token=token)


def _saved(state_dir: Path) -> dict[str, Any]:
    """The bot's state file (there is one): its content, after checking it is 0600."""
    [path] = state_dir.glob("matrix-*.json")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    return dict(json.loads(path.read_text(encoding="utf-8")))


async def _log_out(server: SynapseServer, token: str) -> None:
    """Revokes ``token`` as its holder would (``/logout``)."""
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(
            f"{server.url}/_matrix/client/v3/logout", headers={"Authorization": f"Bearer {token}"}, json={}
        )
    response.raise_for_status()


async def test_restarted_more_often_than_the_login_limit_allows_it_answers_after_every_start(
    limited: SynapseServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="petstore_bot.matrix")
    proxy = await FaultProxy(limited.url).start()
    bot = BotRunner(limited, register(limited, "petbot"), tmp_path / "bot-state")
    alice = _person(limited, "alice")
    try:
        room = ""
        for start in range(STARTS):
            async with bot.running(homeserver=proxy.url, sync_timeout_ms=1000):
                room = room or await room_with(alice, bot.account.user_id)
                reply = await ask(alice, room, f"!hello {start}", bot_id=bot.account.user_id)
                assert reply["body"] == f"HELLO {start}"
            if start == 0:
                first = _saved(bot.state_dir)
    finally:
        await alice.aclose()
        await proxy.aclose()
    assert proxy.logins == 1, f"{proxy.logins} password logins for {STARTS} starts"
    last = _saved(bot.state_dir)
    assert last["access_token"] == first["access_token"] and last["device_id"] == first["device_id"]
    assert "429" not in caplog.text
    assert first["access_token"] not in caplog.text, "the access token was logged"


async def test_a_revoked_token_is_replaced_by_one_login_on_the_same_device(
    limited: SynapseServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="petstore_bot.matrix")
    proxy = await FaultProxy(limited.url).start()
    bot = BotRunner(limited, register(limited, "petbot"), tmp_path / "bot-state")
    alice = _person(limited, "alice")
    me = bot.account.user_id
    try:
        async with bot.running(homeserver=proxy.url, sync_timeout_ms=1000):
            room = await room_with(alice, me)
            assert (await ask(alice, room, "!one", bot_id=me))["body"] == "ONE"
            before = _saved(bot.state_dir)
            await _until_published(alice, me, before["device_id"])
            await _log_out(limited, before["access_token"])  # while it runs: the device and its keys deleted
            assert (await ask(alice, room, "!two", bot_id=me))["body"] == "TWO"
            await _until_published(alice, me, before["device_id"])  # the same device, its keys published again
        during = _saved(bot.state_dir)
        assert proxy.logins == 2
        await _log_out(limited, during["access_token"])  # while it is stopped
        async with bot.running(homeserver=proxy.url, sync_timeout_ms=1000):
            assert (await ask(alice, room, "!three", bot_id=me))["body"] == "THREE"
            await _until_published(alice, me, before["device_id"])
        after = _saved(bot.state_dir)
    finally:
        await alice.aclose()
        await proxy.aclose()
    assert proxy.logins == 3, "one login for each revoked token, none besides"
    assert before["device_id"] == during["device_id"] == after["device_id"]
    assert len({before["access_token"], during["access_token"], after["access_token"]}) == 3
    assert "access token of" in caplog.text and before["access_token"] not in caplog.text


async def _until_published(person: MatrixUser, user_id: str, device_id: str) -> None:
    """Waits until the homeserver has ``device_id``'s identity keys (what others encrypt to): a logout deletes them
    with the device, and the bot logging in again on that device publishes them again."""
    end = time.monotonic() + 30
    while True:
        response = await person.http.post("/keys/query", json={"device_keys": {user_id: []}})
        devices = response.json().get("device_keys", {}).get(user_id, {})
        if device_id in devices and devices[device_id].get("keys"):
            return
        assert time.monotonic() < end, f"the keys of {device_id} are not published again: {devices}"
        await asyncio.sleep(0.1)


async def _until(condition: Callable[[], bool], *, what: str, deadline: float = 30.0) -> None:
    end = time.monotonic() + deadline
    while not condition():
        assert time.monotonic() < end, f"{what}: not within {deadline:.0f}s"
        await asyncio.sleep(0.02)


async def test_a_process_that_cannot_log_in_or_sync_does_not_hold_the_lease(
    bot: BotRunner, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Its logins answered 429 (the login limit), it does not take the lease; once it logs in, it does; while its
    syncs fail (the homeserver out of reach), it gives the lease up, and takes it again when they come through. The
    429 on login is logged as the login limit, which Synapse's per-user override does not lift."""
    caplog.set_level(logging.WARNING, logger="petstore_bot.matrix")
    proxy = await FaultProxy(bot.server.url).start()
    proxy.limit_logins = 10**6
    lease = open_lease(f"sqlite:///{tmp_path / 'shared.sqlite3'}", state_dir=tmp_path, name="matrix reach")
    transport = bot.transport(homeserver=proxy.url, unreachable_after=1.0, sync_timeout_ms=300)

    async def run(stop: asyncio.Event) -> None:
        try:
            await asyncio.gather(transport.run(upper, stop=stop), Leadership(lease).run(stop, reach=transport.reach))
        finally:
            lease.close()

    stop = asyncio.Event()
    serving = asyncio.create_task(run(stop))
    try:
        await _until(lambda: proxy.logins >= 5, what="logins tried again after 429")
        assert not lease.held, "took the lease without being logged in"
        proxy.limit_logins = 0
        await asyncio.wait_for(lease.wait_held(), timeout=10)
        proxy.refuse_all = True
        await asyncio.wait_for(lease.wait_lost(), timeout=10)
        assert not serving.done()
        proxy.refuse_all = False
        await asyncio.wait_for(lease.wait_held(), timeout=10)
    finally:
        stop.set()
        await serving
        await proxy.aclose()
    [limited] = {r.getMessage() for r in caplog.records if r.getMessage().startswith("login rate-limited")}
    assert "rc_login" in limited and "override_ratelimit does not lift it" in limited


async def test_the_homeserver_of_these_tests_does_limit_logins(limited: SynapseServer) -> None:
    """Last in the module: the limit the tests above stay under is real (a few more logins are answered 429)."""
    account = register(limited, "someone")
    body = {"type": "m.login.password", "identifier": {"type": "m.id.user", "user": account.user_id}}
    async with httpx.AsyncClient(timeout=30) as http:
        codes = [
            (
                await http.post(f"{limited.url}/_matrix/client/v3/login", json={**body, "password": account.password})
            ).status_code
            for _ in range(6)
        ]
    assert 429 in codes, codes
