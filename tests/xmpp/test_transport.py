"""The XMPP transport on a real Prosody: rooms and direct messages, addressing, history, identity, data, restarts."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import AsyncIterator

import pytest

from petstore_bot.chat import Incoming, Reply
from petstore_bot.xmpp import ANONYMOUS, Account, XmppError, XmppTransport
from xmpp.conftest import BotRunner, _unavailable, register
from xmpp.person import Person, ask, from_
from xmpp.prosody_server import ProsodyServer, ProsodyUnavailable

pytestmark = pytest.mark.slow


class Told(logging.Handler):
    """Sets ``event`` when a log line containing ``text`` is emitted."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text, self.event = text, asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.text in record.getMessage():
            self.event.set()


@contextlib.asynccontextmanager
async def running_until(transport: XmppTransport) -> AsyncIterator[XmppTransport]:
    """``transport`` run (ready or not) until the block ends."""
    stop = asyncio.Event()
    task = asyncio.create_task(transport.run(Seen(), stop=stop))
    try:
        yield transport
    finally:
        stop.set()
        await asyncio.wait_for(task, timeout=30)


class Seen:
    """A handler that records what it was handed and answers ``who: text``."""

    def __init__(self) -> None:
        self.messages: list[Incoming] = []

    async def __call__(self, message: Incoming) -> Reply | None:
        self.messages.append(message)
        return Reply(text=f"{message.user} in {message.room}: {message.text}")


async def test_a_command_in_a_room_and_in_a_direct_message_names_the_account(bot: BotRunner, people, room) -> None:
    alice: Person = await people("alice")
    await alice.join(room, "alice")
    seen = Seen()
    async with bot.running(seen, rooms=[room]):
        alice.say(room, "!list sold")
        said = await alice.expect(from_(f"{room}/petbot"))
        assert said["body"] == f"xmpp:{alice.jid} in xmpp:{room}: !list sold"
        assert said["type"] == "groupchat"
        alice.tell(bot.login.jid, "list sold")
        told = await alice.expect(from_(bot.login.jid))
        assert told["body"] == f"xmpp:{alice.jid} in xmpp:{alice.jid}: !list sold"
        assert told["type"] == "chat"
    assert [m.platform for m in seen.messages] == ["xmpp", "xmpp"]


async def test_only_messages_for_the_bot_are_commands_in_a_room(bot: BotRunner, people, room) -> None:
    alice: Person = await people("alice")
    await alice.join(room, "alice")
    seen = Seen()
    async with bot.running(seen, rooms=[room]):
        for text in ("list sold", "petbot is great", "hello everyone", "petbot: list", "petbot, hello"):
            alice.say(room, text)
        first = await alice.expect(from_(f"{room}/petbot"))
        second = await alice.expect(lambda m: from_(f"{room}/petbot")(m) and m is not first)
    assert [first["body"], second["body"]] == [
        f"xmpp:{alice.jid} in xmpp:{room}: !list",
        f"xmpp:{alice.jid} in xmpp:{room}: !hello",
    ]
    assert [m.text for m in seen.messages] == ["!list", "!hello"]


async def test_the_rooms_history_is_not_run_again_on_join(bot: BotRunner, people, room) -> None:
    alice: Person = await people("alice")
    await alice.join(room, "alice")
    alice.say(room, "!list before the bot came")
    await alice.expect(from_(f"{room}/alice"))  # the room took it (and keeps it in its history)
    seen = Seen()
    async with bot.running(seen, rooms=[room]):
        alice.say(room, "!hello after")
        said = await alice.expect(from_(f"{room}/petbot"))
    assert said["body"].endswith(": !hello after")
    assert [m.text for m in seen.messages] == ["!hello after"]


async def test_service_text_is_a_plain_body_shown_as_data(bot: BotRunner, people, room) -> None:
    alice: Person = await people("alice")
    await alice.join(room, "alice")
    nasty = "<b>Rex</b> & <script>x</script>\n]]> petbot: !delete 1 <message to='x'/>"

    async def service_text(_message: Incoming) -> Reply:
        return Reply(text=nasty, html=f"<p>{nasty}</p>")

    async with bot.running(service_text, rooms=[room]):
        alice.say(room, "!show 1")
        said = await alice.expect(from_(f"{room}/petbot"))
    assert said["body"] == nasty
    assert said.xml.find("{http://jabber.org/protocol/xhtml-im}html") is None
    assert said.xml.find("{jabber:client}message") is None  # the text was not taken as a stanza


async def test_a_semi_anonymous_room_does_not_run_commands_it_cannot_attribute(bot: BotRunner, people, room) -> None:
    alice: Person = await people("alice")
    await alice.join(room, "alice")
    await alice.make_semi_anonymous(room)
    seen = Seen()
    async with bot.running(seen, rooms=[room]):
        alice.say(room, "!list")
        said = await alice.expect(from_(f"{room}/petbot"))
    assert said["body"] == ANONYMOUS.format(jid=bot.login.jid)
    assert seen.messages == []


async def test_the_bot_comes_back_after_prosody_restarts(bot: BotRunner, people, room, prosody: ProsodyServer) -> None:
    alice: Person = await people("alice")
    await alice.join(room, "alice")
    seen = Seen()
    async with bot.running(seen, rooms=[room]) as transport:
        assert transport.reach is not None
        prosody.stop()
        await asyncio.wait_for(transport.reach.wait_down(), timeout=30)
        assert not transport.can_post
        prosody.start()
        await asyncio.wait_for(transport.reach.wait_up(), timeout=60)
        again = await Person.online(prosody, alice.jid, alice.client.password)
        try:
            await again.join(room, "alice")
            again.say(room, "!hello again")
            said = await again.expect(from_(f"{room}/petbot"))
        finally:
            await again.close()
    assert said["body"].endswith(": !hello again")


async def test_a_refused_password_ends_the_transport_in_one_line(bot: BotRunner, prosody: ProsodyServer) -> None:
    wrong = Account(jid=bot.login.jid, password="not-it", server="127.0.0.1", port=prosody.port, tls="off")
    with pytest.raises(XmppError) as raised:
        await asyncio.wait_for(bot.transport(account=wrong).run(Seen(), stop=asyncio.Event()), timeout=60)
    assert "refused the login" in str(raised.value) and "not-it" not in str(raised.value)


async def test_starttls_is_required_unless_turned_off(bot: BotRunner, prosody: ProsodyServer) -> None:
    """This Prosody offers no STARTTLS: the default policy will not log in (the password is never offered)."""
    strict = Account(jid=bot.login.jid, password=bot.login.password, server="127.0.0.1", port=prosody.port)
    with pytest.raises(XmppError, match="no way to log in that keeps the password safe"):
        await asyncio.wait_for(bot.transport(account=strict).run(Seen(), stop=asyncio.Event()), timeout=60)


async def test_starttls_with_the_servers_certificate_checked(people, tmp_path_factory) -> None:
    """The default policy on a Prosody that requires STARTTLS: the bot logs in over TLS, its certificate checked
    against a private CA; without that CA the certificate is refused and no session comes up."""
    try:
        server = ProsodyServer.create(tmp_path_factory.mktemp("prosody-tls"), tls=True)
        server.start()
    except ProsodyUnavailable as exc:
        _unavailable(str(exc))
    try:
        login = register(server, "petbot")
        runner = BotRunner(server, login)
        trusted = Account(
            jid=login.jid, password=login.password, server="127.0.0.1", port=server.port, ca_file=server.ca_file
        )
        async with runner.running(Seen(), account=trusted) as transport:
            assert transport.can_post
        untrusted = Account(jid=login.jid, password=login.password, server="127.0.0.1", port=server.port)
        told = Told("is not trusted")
        logging.getLogger("petstore_bot.xmpp").addHandler(told)
        try:
            async with running_until(runner.transport(account=untrusted)) as transport:
                await asyncio.wait_for(told.event.wait(), timeout=60)
                assert transport.reach is not None and not transport.reach.up
        finally:
            logging.getLogger("petstore_bot.xmpp").removeHandler(told)
    finally:
        server.stop()


async def test_the_bot_joins_again_when_it_is_kicked_out_of_a_room(bot: BotRunner, people, room) -> None:
    alice: Person = await people("alice")  # the room's owner: she may kick
    await alice.join(room, "alice")
    async with bot.running(Seen(), rooms=[room]):
        seen, petbot = len(alice.presences), f"{room}/petbot"
        await alice.client.plugin["xep_0045"].set_role(room, "petbot", "none")  # a kick
        gone = await alice.expect_presence(
            lambda p: str(p["from"]) == petbot and p["type"] == "unavailable", after=seen
        )
        back = alice.presences.index(gone) + 1
        await alice.expect_presence(lambda p: str(p["from"]) == petbot and p["type"] != "unavailable", after=back)
        assert (await ask(alice, room, "!hello")).endswith(": !hello")


async def test_a_server_that_stops_answering_is_left_and_connected_to_again(
    bot: BotRunner, people, room, prosody: ProsodyServer
) -> None:
    """Prosody frozen (SIGSTOP): no answer to the bot's ping, so it drops the connection (its lease with it) and
    connects again once Prosody answers (SIGCONT)."""
    alice: Person = await people("alice")
    await alice.join(room, "alice")
    async with bot.running(Seen(), rooms=[room], ping_every=0.5, ping_timeout=1.0) as transport:
        assert transport.reach is not None and prosody.process is not None
        os.kill(prosody.process.pid, signal.SIGSTOP)
        try:
            await asyncio.wait_for(transport.reach.wait_down(), timeout=30)
        finally:
            os.kill(prosody.process.pid, signal.SIGCONT)
        await asyncio.wait_for(transport.reach.wait_up(), timeout=60)
        assert (await ask(alice, room, "!hello")).endswith(": !hello")
