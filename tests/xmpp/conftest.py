"""A real Prosody for the session, accounts on it, people online, and the bot's XMPP transport run as a task.

When Prosody cannot start: ``pytest.fail`` with the reason when ``CI=true``, else ``pytest.skip`` with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pytest
from real_parts import unavailable

from petstore_bot.addressing import Address, Addressing
from petstore_bot.chat import Handler, Incoming, Reply
from petstore_bot.core import BotCore
from petstore_bot.xmpp import Account, XmppTransport
from xmpp.person import Person
from xmpp.prosody_server import MUC, ProsodyServer, ProsodyUnavailable


def _unavailable(reason: str) -> None:
    unavailable(f"Prosody could not start: {reason}")


@pytest.fixture(scope="session")
def prosody_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProsodyServer]:
    server = None
    try:
        server = ProsodyServer.create(tmp_path_factory.mktemp("prosody"))
        server.start()
    except (ProsodyUnavailable, OSError) as exc:
        _unavailable(str(exc))
    assert server is not None
    yield server
    server.stop()


@pytest.fixture
def prosody(prosody_session: ProsodyServer) -> ProsodyServer:
    """The session's Prosody, started again if a test left it stopped."""
    if prosody_session.process is None:
        try:
            prosody_session.start()
        except ProsodyUnavailable as exc:
            _unavailable(str(exc))
    return prosody_session


async def upper(message: Incoming) -> Reply | None:
    """The test handler: ``!text`` -> ``TEXT`` (with an HTML body an XMPP reply leaves out)."""
    text = message.text.removeprefix("!").upper()
    return Reply(text=text, html=f"<b>{text}</b>")


def addressed_by(names: Sequence[str]) -> Address:
    """The test bot's addressing: ``!`` and any word; ``hello`` and ``list`` alone too, in a direct chat or after
    one of ``names``."""
    return Addressing(prefix="!", commands=frozenset({"hello", "list"}), names=tuple(names)).line


def addressing_of(core: BotCore) -> Callable[[Sequence[str]], Address]:
    """The bot core's addressing (its prefix and commands) with the names the transport gives, as the runtime wires
    it."""
    return lambda names: replace(core.addressing, names=tuple(names)).line


@dataclass(frozen=True)
class Login:
    jid: str
    password: str


def register(server: ProsodyServer, name: str) -> Login:
    password = f"pw-{secrets.token_hex(12)}"
    return Login(jid=server.register(f"{name}-{secrets.token_hex(4)}", password), password=password)


@pytest.fixture
def room() -> str:
    """A fresh room's JID (made by the first to join it)."""
    return f"ops-{secrets.token_hex(4)}@{MUC}"


@pytest.fixture
async def people(prosody: ProsodyServer) -> AsyncIterator[Callable[[str], Awaitable[Person]]]:
    """``await people("alice")``: a fresh account, online (disconnected at teardown)."""
    made: list[Person] = []

    async def make(name: str) -> Person:
        login = register(prosody, name)
        person = await Person.online(prosody, login.jid, login.password)
        made.append(person)
        return person

    yield make
    for person in made:
        await person.close()


class BotRunner:
    """Runs XmppTransport.run as a task; ``async with runner.running(...)`` starts it and waits until ready."""

    def __init__(self, server: ProsodyServer, login: Login) -> None:
        self.server, self.login = server, login

    def transport(self, **overrides: Any) -> XmppTransport:
        options: dict[str, Any] = {
            "account": Account(
                jid=self.login.jid, password=self.login.password, server="127.0.0.1", port=self.server.port, tls="off"
            ),
            "rooms": [],
            "nick": "petbot",
            "addressing": addressed_by,
            "backoff_max": 1.0,
        }
        options.update(overrides)
        return XmppTransport(**options)

    @contextlib.asynccontextmanager
    async def running(
        self, handler: Handler = upper, *, stop: asyncio.Event | None = None, **overrides: Any
    ) -> AsyncIterator[XmppTransport]:
        stop = stop or asyncio.Event()
        bot = self.transport(**overrides)
        assert bot.reach is not None
        task = asyncio.create_task(bot.run(handler, stop=stop))
        waiter = asyncio.create_task(bot.reach.wait_up())
        await asyncio.wait({task, waiter}, timeout=60, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if task.done():
            task.result()
        assert bot.reach.up, "the transport did not get ready within 60 s"
        try:
            yield bot
        finally:
            stop.set()
            await asyncio.wait_for(task, timeout=60)


@pytest.fixture
def bot(prosody: ProsodyServer) -> BotRunner:
    return BotRunner(prosody, register(prosody, "petbot"))
