"""A real ngIRCd for the session (server password on), people on it, and the IRC transport run as a task.

When ngIRCd cannot start: ``pytest.fail`` with the reason when ``CI=true``, else ``pytest.skip`` with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any

import pytest
from real_parts import unavailable

from ircd.ngircd_server import NgircdServer, NgircdUnavailable
from ircd.person import WAIT, Person
from petstore_bot.addressing import Address, Addressing
from petstore_bot.chat import Handler, Incoming, Reply
from petstore_bot.irc import IrcTransport

_nicks = itertools.count(1)


def _unavailable(reason: str) -> None:
    unavailable(f"ngIRCd could not start: {reason}")


def start(server: NgircdServer) -> NgircdServer:
    """``server`` started; a failure to start fails (CI) or skips the test."""
    try:
        server.start()
    except (NgircdUnavailable, OSError) as exc:
        _unavailable(str(exc))
    return server


@pytest.fixture(scope="session")
def ngircd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NgircdServer]:
    server = None
    try:
        server = NgircdServer.create(
            tmp_path_factory.mktemp("ngircd"),
            password=f"pw-{secrets.token_hex(8)}",
            services=f"services-{secrets.token_hex(8)}",
        )
    except NgircdUnavailable as exc:
        _unavailable(str(exc))
    assert server is not None
    start(server)
    yield server
    server.stop()


@pytest.fixture
def ircd(ngircd: NgircdServer) -> NgircdServer:
    """The session's ngIRCd, started again if a test left it stopped."""
    return ngircd if ngircd.process is not None else start(ngircd)


def nick(name: str) -> str:
    """A nick of its own for each use (tests share one server)."""
    return f"{name}{next(_nicks)}x{secrets.token_hex(2)}"


@pytest.fixture
async def people(ircd: NgircdServer) -> AsyncIterator[Callable[[str], Awaitable[Person]]]:
    """``await people("alice")``: a person connected to the server (disconnected at teardown)."""
    made: list[Person] = []

    async def make(name: str) -> Person:
        person = await Person.connect(ircd, nick(name))
        made.append(person)
        return person

    yield make
    for person in made:
        person.close()


async def upper(message: Incoming) -> Reply | None:
    """The test handler: ``!text`` -> ``TEXT``."""
    return Reply(message.text.removeprefix("!").upper())


#: The test bot's addressing: ``!`` and any word; these words alone in a private message or after the bot's name.
def addressing(names: Sequence[str]) -> Address:
    return Addressing(prefix="!", commands=frozenset({"hello", "list", "long", "evil"}), names=tuple(names)).line


class BotRunner:
    """Runs IrcTransport.run as a task; ``async with runner.running(...)`` starts it and waits until ready."""

    def __init__(self, server: NgircdServer) -> None:
        self.server = server
        self.nick = nick("petbot")
        self.channel = f"#{nick('ops')}"

    def transport(self, **overrides: Any) -> IrcTransport:
        options: dict[str, Any] = {
            "server": "127.0.0.1",
            "port": self.server.port,
            "tls": False,
            "nick": self.nick,
            "channels": [self.channel],
            "identify": "nick",
            "addressing": addressing,
            "password": self.server.password,
            "flood_burst": 5,
            "flood_rate": 3.0,
            "backoff_max": 1.0,
        }
        options.update(overrides)
        return IrcTransport(**options)

    @contextlib.asynccontextmanager
    async def running(
        self, handler: Handler = upper, *, transport: IrcTransport | None = None, **overrides: Any
    ) -> AsyncIterator[IrcTransport]:
        stop, ready = asyncio.Event(), asyncio.Event()
        made = transport or self.transport(**overrides)
        task = asyncio.create_task(made.run(handler, stop=stop, ready=ready))
        waiter = asyncio.create_task(ready.wait())
        await asyncio.wait({task, waiter}, timeout=WAIT, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if task.done():
            task.result()
        assert ready.is_set(), f"the transport did not get ready within {WAIT:.0f} s"
        try:
            yield made
        finally:
            stop.set()
            await asyncio.wait_for(task, timeout=WAIT)


@pytest.fixture
def bot(ircd: NgircdServer) -> BotRunner:
    return BotRunner(ircd)
