"""The IRC transport against a real ngIRCd, people on jaraco's client: channels, private messages, addressing, long
answers within 512 bytes, chat text kept data, a restart of the server, the server password."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from ircd.conftest import BotRunner, start, upper
from ircd.ngircd_server import NgircdServer
from ircd.person import WAIT, Person
from petstore_api.errors import ConfigError
from petstore_bot.addressing import Addressing
from petstore_bot.chat import Incoming, Reply
from petstore_bot.irc import IrcError, escape, message_lines, transport
from petstore_bot.settings import BotSettings
from petstore_bot.transport import Wiring

People = Callable[[str], Awaitable[Person]]


async def in_channel(people: People, bot: BotRunner, name: str = "alice") -> Person:
    person = await people(name)
    await person.join(bot.channel)
    return person


async def test_a_command_in_a_channel_and_in_a_private_message_is_answered_there(
    bot: BotRunner, people: People
) -> None:
    async with bot.running():
        alice = await in_channel(people, bot)
        assert await alice.ask(bot.channel, "!hello", bot=bot.nick) == ["HELLO"]
        assert await alice.ask(bot.nick, "!list", bot=bot.nick) == ["LIST"]
        assert await alice.ask(bot.nick, "hello", bot=bot.nick) == ["HELLO"]  # alone, in a private message


async def test_naming_the_bot_addresses_it_and_other_talk_is_left_alone(bot: BotRunner, people: People) -> None:
    async with bot.running():
        alice = await in_channel(people, bot)
        since = alice.say(bot.channel, f"{bot.nick} is great")
        alice.say(bot.channel, "hello everyone")
        assert await alice.ask(bot.channel, f"{bot.nick}: hello", bot=bot.nick) == ["HELLO"]
        assert [s.text for s in alice.said[since:] if s.nick == bot.nick] == ["HELLO"]
        assert await alice.ask(bot.channel, f"{bot.nick.upper()}, \x02list\x02", bot=bot.nick) == ["LIST"]


async def test_the_person_is_named_by_nick_and_the_room_by_channel_or_nick(bot: BotRunner, people: People) -> None:
    async def who(message: Incoming) -> Reply:
        return Reply(f"{message.platform} {message.room} {message.user}")

    async with bot.running(who):
        alice = await in_channel(people, bot)
        channel = bot.channel.lower()
        assert await alice.ask(bot.channel, "!hello", bot=bot.nick) == [f"irc {'irc:' + channel} irc:{alice.nick}"]
        assert await alice.ask(bot.nick, "!hello", bot=bot.nick) == [f"irc irc:{alice.nick} irc:{alice.nick}"]


async def test_without_a_services_account_a_person_is_no_one_listed(bot: BotRunner, people: People) -> None:
    async def who(message: Incoming) -> Reply:
        return Reply(message.user)

    async with bot.running(who, identify="account"):
        alice = await in_channel(people, bot)
        assert await alice.ask(bot.channel, "!hello", bot=bot.nick) == [f"irc:?{alice.nick}"]


async def test_a_services_account_the_server_vouches_for_names_the_person(
    bot: BotRunner, people: People, ircd: NgircdServer
) -> None:
    async def who(message: Incoming) -> Reply:
        return Reply(message.user)

    services = ircd.services()
    try:
        async with bot.running(who, identify="account"):
            alice, bob = await in_channel(people, bot), await in_channel(people, bot, "bob")
            services.login(alice.nick, "Alice[Ops]")
            await bob.logged_in(alice.nick, "Alice[Ops]")  # the server has it
            since = len(bob.said)
            assert await alice.ask(bot.channel, "!hello", bot=bot.nick) == ["irc:alice[ops]"]  # CASEMAPPING=ascii
            await bob.wait_for(since, nick=bot.nick, where=bot.channel)  # bob has alice's answer: his next is his own
            assert await bob.ask(bot.channel, "!hello", bot=bot.nick) == [f"irc:?{bob.nick}"]
            assert await alice.ask(bot.nick, "!hello", bot=bot.nick) == ["irc:alice[ops]"]  # asked again in private
    finally:
        services.close()


LONG = (
    "Pets: " + ", ".join(f"Rex-{n} the dög 🐕" for n in range(120)) + "\n"
    "\n"
    "second line\r\n" + "ü" * 700 + "\n" + "x" * 1500
)


async def test_a_long_answer_comes_whole_in_lines_within_512_bytes(bot: BotRunner, people: People) -> None:
    async def long(message: Incoming) -> Reply | None:
        return Reply(LONG) if message.text == "!long" else await upper(message)

    async with bot.running(long):
        alice = await in_channel(people, bot)
        since = alice.say(bot.channel, "!long")
        alice.say(bot.channel, "!hello")  # answered after the whole of the long answer
        await alice.until(lambda: any(s.text == "HELLO" for s in alice.said[since:]), what="HELLO")
    texts = [s.text for s in alice.said[since:] if s.nick == bot.nick]
    assert texts[-1] == "HELLO"
    texts = texts[:-1]
    assert re.sub(r"\s", "", "".join(texts)) == re.sub(r"\s", "", LONG)  # every character, in order
    assert len(texts) > len(LONG.splitlines())  # lines were cut
    relayed = [line for line in alice.raw if f"NOTICE {bot.channel} :" in line and line.startswith(f":{bot.nick}!")]
    assert len(relayed) == len(texts) + 1
    assert max(len(line.encode()) + 2 for line in relayed) <= 512
    assert max(len(line.encode()) + 2 for line in relayed) > 480  # the budget is used, not a small guess


async def test_chat_text_cannot_make_a_second_command_or_format_one(bot: BotRunner, people: People) -> None:
    other = f"{bot.channel}-other"
    evil = f"Rex\r\nPRIVMSG {other} :owned\rQUIT :bye\x02bold\x03,4red\x01ACTION dances\x01\x00\x7f end"

    async def pet(_message: Incoming) -> Reply:
        return Reply(f"pet: {evil}")

    async with bot.running(pet, channels=[bot.channel, other]) as running:
        alice = await in_channel(people, bot)
        bob = await people("bob")
        await bob.join(other)
        texts = await alice.ask(bot.channel, "!evil", bot=bot.nick, count=3)
        assert texts == ["pet: Rex", f"PRIVMSG {other} :owned", "QUIT :bye␂bold␃,4red␁ACTION dances␁␀␡ end"]
        assert await alice.ask(bot.channel, "!hello", bot=bot.nick) == ["pet: Rex"]  # still connected
        assert running.can_post
    assert [s for s in bob.said if s.nick == bot.nick] == []
    assert not any(ch in line for line in alice.raw for ch in "\x00\x01\x02\x03\x7f\r\n")


def test_lines_are_cut_on_spaces_or_character_boundaries_and_control_codes_shown() -> None:
    assert escape("a\x02b\x1fc\x7f\td") == "a␂b␟c␡\td"
    assert list(message_lines("one two three", budget=8)) == ["one two", "three"]
    assert list(message_lines("one two", budget=7)) == ["one two"]
    cut = list(message_lines("ü" * 10, budget=5))
    assert cut == ["üü", "üü", "üü", "üü", "üü"] and all(len(c.encode()) <= 5 for c in cut)
    assert list(message_lines("a\r\n\nb\rc", budget=10)) == ["a", "b", "c"]


async def test_the_bot_comes_back_after_the_server_restarts(bot: BotRunner, people: People, ircd: NgircdServer) -> None:
    async with bot.running() as running:
        alice = await in_channel(people, bot)
        assert await alice.ask(bot.channel, "!hello", bot=bot.nick) == ["HELLO"]
        ircd.stop()
        await asyncio.wait_for(running.reach.wait_down(), WAIT)
        assert not running.can_post
        start(ircd)
        await asyncio.wait_for(running.reach.wait_up(), WAIT)  # registered and in its channel again
        alice = await in_channel(people, bot, "alice")
        assert await alice.ask(bot.channel, "!hello", bot=bot.nick) == ["HELLO"]
        assert await running.announce(f"irc:{bot.channel}", Reply("announced\nin two lines"))
        since = len(alice.said)
        assert await running.announce(f"irc:{alice.nick}", Reply("just you"))
        assert [s.text for s in await alice.wait_for(since, nick=bot.nick, where=alice.nick)] == ["just you"]


async def test_a_wrong_server_password_stops_the_bot_in_one_line(bot: BotRunner) -> None:
    made = bot.transport(password="not-the-password")
    with pytest.raises(IrcError) as raised:
        await asyncio.wait_for(made.run(lambda _m: asyncio.sleep(0, None), stop=asyncio.Event()), WAIT)
    assert "refused" in str(raised.value) and "\n" not in str(raised.value)
    assert "not-the-password" not in str(raised.value)


def _wiring(tmp_path: Path, **irc: object) -> Wiring:
    settings = BotSettings.model_validate({"irc": {"server": "irc.example.org", **irc}})
    return Wiring(
        bot=settings,
        state_dir=tmp_path,
        config_where="petstore.toml",
        addressing=lambda names: Addressing(prefix="!", names=tuple(names)).line,
        accept_invite=lambda _inviter, _direct, _room: False,
    )


def test_a_server_password_in_the_config_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PETSTORE_BOT__IRC__PASSWORD", raising=False)
    with pytest.raises(ConfigError, match=r"must not be in the config file \(petstore.toml\)"):
        transport(_wiring(tmp_path, password="hunter2"))
    monkeypatch.setenv("PETSTORE_BOT__IRC__PASSWORD", "hunter2")
    assert transport(_wiring(tmp_path, password="hunter2")).names == ("petbot",)
    monkeypatch.delenv("PETSTORE_BOT__IRC__PASSWORD")
    secret = tmp_path / "irc-password"
    secret.write_text("# the server password\nhunter2\n", encoding="utf-8")
    assert transport(_wiring(tmp_path, password_file=str(secret))).owns("irc:#ops")
    assert secret.stat().st_mode & 0o077 == 0  # tightened to 0600 when read
