"""A person on the test Prosody: slixmpp as a plain client (the bot uses it as a transport; this is the other side).

``Person.online(server, jid, password)`` connects (no TLS, SCRAM on loopback) and sends presence; ``join`` enters
a room (made, owned and open, by the first to join), ``say`` writes in a room, ``tell`` writes directly, and
``expect`` waits for a message that matches (every message received is kept, in order).
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from slixmpp import JID, ClientXMPP, Message, Presence
from slixmpp.plugins.xep_0004 import Form

from xmpp.prosody_server import ProsodyServer

T = TypeVar("T")
#: How long a test waits for a message before it fails.
PATIENCE = 30.0


@dataclass
class Person:
    client: ClientXMPP
    jid: str
    received: list[Message] = field(default_factory=list)
    #: Every presence of a room's occupant received, in order.
    presences: list[Presence] = field(default_factory=list)
    _arrived: asyncio.Condition = field(default_factory=asyncio.Condition)

    @classmethod
    async def online(cls, server: ProsodyServer, jid: str, password: str) -> Person:
        client = ClientXMPP(jid, password, plugin_config={"feature_mechanisms": {"unencrypted_scram": True}})
        client.enable_starttls, client.enable_direct_tls, client.enable_plaintext = False, False, True
        client.register_plugin("xep_0045")
        client.register_plugin("xep_0004")
        person = cls(client=client, jid=jid)
        client.add_event_handler("message", person._keep)
        client.add_event_handler("groupchat_presence", person._keep_presence)
        started = asyncio.ensure_future(client.wait_until("session_start", PATIENCE))
        client.connect("127.0.0.1", server.port)
        await started
        client.send_presence()
        return person

    async def _keep(self, msg: Message) -> None:
        async with self._arrived:
            self.received.append(msg)
            self._arrived.notify_all()

    async def _keep_presence(self, presence: Presence) -> None:
        async with self._arrived:
            self.presences.append(presence)
            self._arrived.notify_all()

    async def join(self, room: str, nick: str) -> None:
        await self.client.plugin["xep_0045"].join_muc_wait(JID(room), nick, maxstanzas=0, timeout=PATIENCE)

    async def make_semi_anonymous(self, room: str) -> None:
        """As the room's owner: only moderators see occupants' real JIDs from now on."""
        muc = self.client.plugin["xep_0045"]
        form: Form = await muc.get_room_config(JID(room))
        form["type"] = "submit"
        form.field["muc#roomconfig_whois"]["value"] = "moderators"
        await muc.set_room_config(JID(room), form)

    def say(self, room: str, text: str) -> str:
        """Writes ``text`` in ``room``; the message's id (the room gives it back to everyone with it)."""
        message = self.client.make_message(mto=JID(room), mbody=text, mtype="groupchat")
        message["id"] = secrets.token_hex(8)
        message.send()
        return str(message["id"])

    def tell(self, jid: str, text: str) -> None:
        self.client.send_message(mto=JID(jid), mbody=text, mtype="chat")

    async def expect(self, match: Callable[[Message], bool], *, after: int = 0) -> Message:
        """The first message (from index ``after`` of those received) that ``match`` accepts; waits for it."""
        return await self._first(self.received, match, after=after)

    async def expect_presence(self, match: Callable[[Presence], bool], *, after: int = 0) -> Presence:
        """The first occupant's presence (from index ``after``) that ``match`` accepts; waits for it."""
        return await self._first(self.presences, match, after=after)

    async def _first(self, items: list[T], match: Callable[[T], bool], *, after: int) -> T:
        def found() -> T | None:
            return next((item for item in items[after:] if match(item)), None)

        async with self._arrived:
            await asyncio.wait_for(self._arrived.wait_for(lambda: found() is not None), timeout=PATIENCE)
        item = found()
        assert item is not None
        return item

    async def close(self) -> None:
        if self.client.is_connected():
            await self.client.disconnect(wait=2.0)


def from_(sender: str) -> Callable[[Message], bool]:
    """Messages with a body whose sender is ``sender`` (a full JID such as room/nick, or a bare JID)."""

    def match(msg: Message) -> bool:
        got = JID(msg["from"])
        return bool(msg["body"]) and (str(got) == sender or (got.bare == sender and "/" not in sender))

    return match


async def ask(person: Person, room: str, text: str) -> str:
    """``text`` said in ``room``; the bot's first message there after it (its answer, when one person asks at a
    time). The room orders messages: what the bot said before it reaches ``person`` before ``text`` comes back."""
    said = person.say(room, text)
    back = await person.expect(lambda m: m["id"] == said and JID(m["from"]).bare == room)
    after = person.received.index(back) + 1
    return str((await person.expect(from_(f"{room}/petbot"), after=after))["body"])
