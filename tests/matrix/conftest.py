"""A real Synapse for the session, users registered on it, and a bot transport run as a task.

When Synapse cannot start: ``pytest.fail`` with the reason when ``CI=true``, else ``pytest.skip`` with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from real_parts import unavailable

from matrix.cs_client import MatrixUser
from matrix.synapse_server import SynapseServer, SynapseUnavailable
from petstore_bot.addressing import Addressing
from petstore_bot.chat import Handler, Incoming, Reply
from petstore_bot.matrix import MatrixTransport


def _unavailable(reason: str) -> None:
    unavailable(f"Synapse could not start: {reason}")


@pytest.fixture(scope="session")
def synapse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SynapseServer]:
    server = None
    try:
        server = SynapseServer.create(tmp_path_factory.mktemp("synapse"))
        server.start()
    except (SynapseUnavailable, OSError) as exc:
        _unavailable(str(exc))
    assert server is not None
    yield server
    server.stop()


@pytest.fixture
def homeserver(synapse: SynapseServer) -> SynapseServer:
    """The session's Synapse, started again if a test left it stopped."""
    if synapse.process is None:
        try:
            synapse.start()
        except SynapseUnavailable as exc:
            _unavailable(str(exc))
    return synapse


@dataclass
class Account:
    user_id: str
    password: str


@pytest.fixture
async def users(homeserver: SynapseServer) -> AsyncIterator[Callable[[str], Awaitable[MatrixUser]]]:
    """``await users("alice")``: a fresh registered user, logged in (closed at teardown)."""
    made: list[MatrixUser] = []

    async def make(name: str) -> MatrixUser:
        account = register(homeserver, name)
        user = await MatrixUser.login(base_url=homeserver.url, user_id=account.user_id, password=account.password)
        made.append(user)
        return user

    yield make
    for user in made:
        await user.aclose()


def register(server: SynapseServer, name: str) -> Account:
    password = f"pw-{secrets.token_hex(12)}"
    user_id = server.register(localpart=f"{name}-{secrets.token_hex(4)}", password=password)
    return Account(user_id=user_id, password=password)


async def upper(message: Incoming) -> Reply | None:
    """The test handler: ``!text`` -> ``TEXT``, with an HTML body."""
    text = message.text.removeprefix("!").upper()
    return Reply(text=text, html=f"<b>{text}</b>")


#: The test bot's addressing: ``!`` and any word; these words alone too, in a direct chat or after the bot's name.
ADDRESSING = Addressing(prefix="!", commands=frozenset({"hello", "list"}))


def addressed(text: str, *, direct: bool = False, also: Iterable[str] = ()) -> str | None:
    return ADDRESSING.line(text, direct=direct, also=also)


class BotRunner:
    """Runs MatrixTransport.run as a task; ``async with runner.running(...)`` starts it and waits until ready."""

    def __init__(self, server: SynapseServer, account: Account, state_dir: Path) -> None:
        self.server, self.account, self.state_dir = server, account, state_dir

    def transport(self, **overrides: Any) -> MatrixTransport:
        options: dict[str, Any] = {
            "homeserver": self.server.url,
            "user_id": self.account.user_id,
            "password": self.account.password,
            "rooms": [],
            "state_dir": self.state_dir,
            "accept_invite": lambda _inviter, _direct, _room: True,
            "address": addressed,
            "backoff_max": 1.0,
        }
        options.update(overrides)
        return MatrixTransport(**options)

    @contextlib.asynccontextmanager
    async def running(
        self, handler: Handler = upper, *, stop: asyncio.Event | None = None, **overrides: Any
    ) -> AsyncIterator[asyncio.Task[None]]:
        stop, ready = stop or asyncio.Event(), asyncio.Event()
        task = asyncio.create_task(self.transport(**overrides).run(handler, stop=stop, ready=ready))
        waiter = asyncio.create_task(ready.wait())
        await asyncio.wait({task, waiter}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if task.done():
            task.result()
        assert ready.is_set(), "the transport did not get ready within 60 s"
        try:
            yield task
        finally:
            stop.set()
            await asyncio.wait_for(task, timeout=60)


@pytest.fixture
def bot(homeserver: SynapseServer, tmp_path: Path) -> BotRunner:
    return BotRunner(homeserver, register(homeserver, "petbot"), tmp_path / "bot-state")
