"""A person on IRC, as tests need one: jaraco's ``irc`` client (``irc.client_aio``) on the test's event loop.

``await Person.connect(server, "alice")`` registers (sending the server password when it has one); ``join``
waits for the server's JOIN echo; ``say`` sends a PRIVMSG; ``wait_for`` waits until the messages received match.
Every line received is kept raw (``raw``), so a test can count its bytes as the server sent it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from irc.client_aio import AioReactor

from ircd.ngircd_server import NgircdServer

#: Seconds a test waits for a line it expects (a generous bound on a busy machine, not a measurement).
WAIT = 30.0


@dataclass(frozen=True)
class Said:
    """A PRIVMSG or NOTICE received: who from (nick), where (a channel, or this person's nick), the text."""

    nick: str
    target: str
    text: str


class Person:
    """One IRC connection of a person (see the module docstring)."""

    def __init__(self, nick: str) -> None:
        self.nick = nick
        self.said: list[Said] = []
        self.raw: list[str] = []
        self.joined: set[str] = set()
        self.accounts: dict[str, str] = {}  # nick: the account WHOIS said (330)
        self._changed = asyncio.Condition()
        self._welcome = asyncio.Event()
        self._reactor = AioReactor(loop=asyncio.get_running_loop())
        self._connection: Any = self._reactor.server()
        for kind in (
            "pubmsg",
            "privmsg",
            "pubnotice",
            "privnotice",
            "join",
            "welcome",
            "all_raw_messages",
            "whoisaccount",
            "endofwhois",
        ):
            self._reactor.add_global_handler(kind, self._on)

    @classmethod
    async def connect(cls, server: NgircdServer, nick: str, *, password: str | None = None) -> Person:
        person = cls(nick)
        given = password if password is not None else server.password
        await person._connection.connect("127.0.0.1", server.port, nick, password=given, ircname=nick)
        await asyncio.wait_for(person._welcome.wait(), WAIT)
        return person

    def _on(self, _connection: Any, event: Any) -> None:
        if event.type == "all_raw_messages":
            self.raw.append(event.arguments[0])
        elif event.type in ("pubmsg", "privmsg", "pubnotice", "privnotice") and event.source.nick:
            self.said.append(Said(nick=event.source.nick, target=event.target, text=event.arguments[0]))
        elif event.type == "join" and event.source.nick == self.nick:
            self.joined.add(event.target.lower())
        elif event.type == "whoisaccount":
            self.accounts[event.arguments[0]] = event.arguments[1]
        elif event.type == "welcome":
            self._welcome.set()
        asyncio.get_running_loop().create_task(self._notify())

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def until(self, check: Callable[[], bool], *, what: str, timeout: float = WAIT) -> None:
        """Waits until ``check()`` holds, re-checked on each line received; fails after ``timeout``."""
        async with self._changed:
            try:
                await asyncio.wait_for(self._changed.wait_for(check), timeout)
            except TimeoutError:
                raise AssertionError(f"{self.nick}: {what} not seen within {timeout:.0f}s; got {self.said}") from None

    async def join(self, channel: str) -> None:
        self._connection.join(channel)
        await self.until(lambda: channel.lower() in self.joined, what=f"JOIN {channel}")

    async def logged_in(self, nick: str, account: str) -> None:
        """Waits until the server's WHOIS says ``nick`` is logged in to ``account``."""
        self._connection.whois(nick)
        await self.until(lambda: self.accounts.get(nick) == account, what=f"{nick} logged in as {account}")

    def say(self, target: str, text: str) -> int:
        """Sends ``text``; the index in ``said`` from which answers to it are."""
        self._connection.privmsg(target, text)
        return len(self.said)

    async def wait_for(
        self, since: int, *, nick: str, count: int = 1, where: str | None = None, timeout: float = WAIT
    ) -> list[Said]:
        """The first ``count`` messages from ``nick`` (in ``where``, when given) received after index ``since``."""

        def found() -> list[Said]:
            return [s for s in self.said[since:] if s.nick == nick and (where is None or s.target == where)]

        await self.until(lambda: len(found()) >= count, what=f"{count} message(s) from {nick}", timeout=timeout)
        return found()[:count]

    async def ask(self, target: str, text: str, *, bot: str, count: int = 1) -> list[str]:
        """Sends ``text`` to ``target`` and returns the texts of the bot's next ``count`` messages there."""
        where = target if target.startswith("#") else self.nick
        since = self.say(target, text)
        return [s.text for s in await self.wait_for(since, nick=bot, count=count, where=where)]

    def close(self) -> None:
        if self._connection.is_connected():
            self._connection.disconnect("bye")
