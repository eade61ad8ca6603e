"""The bot on IRC as ``petstore bot irc`` runs it: the runtime (petstore_bot.runtime) in-process with the registry's
IRC factory on a real ngIRCd, the real sandbox and a real SQLite state; people on jaraco's client. A command, a
refused viewer write, a confirmation, an approval by a second person, a watch announcement, a schedule (on a clock
the test moves past its run, as tests/xmpp/test_schedule.py), and the bot back after the server restarts: no code of
IRC's own for any of them."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from bot.service import SandboxService, sandbox_service

from ircd.conftest import nick, start
from ircd.ngircd_server import NgircdServer
from ircd.person import WAIT, Person
from petstore_bot.irc import IrcTransport
from petstore_bot.runtime import BotRuntime, Intervals, Launch
from petstore_bot.settings import BotSettings

People = Callable[[str], Awaitable[Person]]
FAST = Intervals(
    approvals=0.05, notifier_step=0.05, finisher=0.05, sweep=0.05, replicas_poll=0.05,
    lease_ttl=1.5, lease_check=0.4, lease_retry=0.05,
)  # fmt: skip
CONFIRM = re.compile(r"confirm ([A-Z0-9]{4}) within")
APPROVE = re.compile(r"approve ([A-Z0-9]{6}) or")


@dataclass
class Running:
    runtime: BotRuntime
    nick: str
    channel: str
    service: SandboxService

    @property
    def transport(self) -> IrcTransport:
        [made] = self.runtime.transports
        assert isinstance(made, IrcTransport)
        return made


class Clock:
    """The schedules' clock: the real time plus what the test has moved it on by."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def __call__(self) -> float:
        return time.time() + self.ahead


@contextlib.asynccontextmanager
async def running(
    ircd: NgircdServer,
    tmp_path: Path,
    *,
    operators: list[str],
    viewers: list[str],
    clock: Callable[[], float] = time.time,
    **bot: object,
) -> AsyncIterator[Running]:
    """The runtime on ``[bot.irc]`` (identify = "nick" on this password-protected server), until the block ends;
    ``clock``: the schedules'."""
    bot_nick, channel = nick("petbot"), f"#{nick('ops')}"
    secret = tmp_path / "irc-password"
    secret.write_text(f"{ircd.password}\n", encoding="utf-8")
    secret.chmod(0o600)
    settings = BotSettings.model_validate(
        {
            "rate_limit": "off",
            "default_role": "viewer",
            "watch_interval": 1,
            "roles": {"operators": operators, "viewers": viewers},
            "irc": {
                "server": "127.0.0.1",
                "port": ircd.port,
                "tls": False,
                "nick": bot_nick,
                "channels": [channel],
                "identify": "nick",
                "password_file": str(secret),
                "flood_rate": 3.0,
            },
            **bot,
        }
    )
    services: list[SandboxService] = []

    def service() -> SandboxService:
        services.append(sandbox_service(tmp_path / "sandbox", audit=tmp_path / "audit.ndjson"))
        return services[-1]

    launch = Launch(
        bot=settings, platforms=("irc",), service=service, state_dir=tmp_path / "state", config_where="test",
        intervals=FAST, clock=clock,
    )  # fmt: skip
    runtime, stop = BotRuntime(launch), asyncio.Event()
    serving = asyncio.create_task(runtime.serve(stop))
    try:
        while not runtime.transports or not runtime.transports[0].can_post:
            await asyncio.wait({serving}, timeout=0.05)  # until the transport is made and in its channel
            if serving.done():
                serving.result()
        yield Running(runtime=runtime, nick=bot_nick, channel=channel, service=services[0])
    finally:
        stop.set()
        await asyncio.wait_for(serving, WAIT)


async def in_channel(people: People, channel: str, name: str) -> Person:
    person = await people(name)
    await person.join(channel)
    return person


async def told(person: Person, target: str, text: str, *, bot: str, until: str) -> str:
    """Sends ``text`` and returns the bot's lines to it up to the first that starts with ``until``, joined."""
    where = target if target.startswith("#") else person.nick
    since = person.say(target, text)

    def lines() -> list[str]:
        return [s.text for s in person.said[since:] if s.nick == bot and s.target == where]

    await person.until(lambda: any(line.startswith(until) for line in lines()), what=until)
    found = lines()
    return "\n".join(found[: next(i for i, line in enumerate(found) if line.startswith(until)) + 1])


async def heard(person: Person, text: str) -> None:
    """Waits until ``person`` has seen a line holding ``text``: each person's connection relays the channel on its own
    time, so an answer to someone else may reach them after they spoke, and be read as the answer to them."""
    await person.until(lambda: any(text in s.text for s in person.said), what=text)


def code(pattern: re.Pattern[str], text: str) -> str:
    found = pattern.search(text)
    assert found, text
    return found[1]


async def test_commands_roles_and_a_confirmation(ircd: NgircdServer, people: People, tmp_path: Path) -> None:
    alice, bob = await people("alice"), await people("bob")
    async with running(ircd, tmp_path, operators=[f"irc:{alice.nick}"], viewers=[f"irc:{bob.nick}"]) as bot:
        for person in (alice, bob):
            await person.join(bot.channel)
        listed = await told(alice, bot.channel, "!list --limit 2", bot=bot.nick, until="2 pets")
        assert listed.startswith("id  name"), listed
        await heard(bob, "2 pets")
        refused = await told(bob, bot.channel, "!add Rex --category 3", bot=bot.nick, until="Not allowed")
        assert refused == "Not allowed: !add needs the operator role in this room; you have viewer (ask an operator)"
        await heard(alice, "Not allowed")
        asked = await told(alice, bot.channel, "!add Rex --category 3", bot=bot.nick, until="categoryId")
        done = await told(alice, bot.channel, f"!confirm {code(CONFIRM, asked)}", bot=bot.nick, until="status")
        assert done.startswith("Added pet "), done
        who = await told(bob, bot.nick, "whoami", bot=bot.nick, until="may run")  # private: the command alone
        assert f"you      irc:{bob.nick}" in who and f"where    irc:{bob.nick}\n" in who + "\n", who  # once


async def test_an_approval_by_a_second_person(ircd: NgircdServer, people: People, tmp_path: Path) -> None:
    alice, olivia = await people("alice"), await people("olivia")
    operators = [f"irc:{alice.nick}", f"irc:{olivia.nick}"]
    async with running(ircd, tmp_path, operators=operators, viewers=[], approvals=["sandbox"]) as bot:
        for person in (alice, olivia):
            await person.join(bot.channel)
        asked = await told(alice, bot.channel, "!add Prodpet --category 3", bot=bot.nick, until="categoryId")
        assert asked.startswith(f"irc:{alice.nick} asks to add a pet on sandbox: it needs a second person."), asked
        ticket = code(APPROVE, asked)
        own = await told(alice, bot.channel, f"!approve {ticket}", bot=bot.nick, until="")
        assert "someone else must approve it" in own, own
        await heard(olivia, "someone else must approve it")
        done = await told(olivia, bot.channel, f"!approve {ticket}", bot=bot.nick, until="Added pet ")
        assert done.startswith("Added pet "), done


async def test_a_watch_is_announced_in_the_channel(ircd: NgircdServer, people: People, tmp_path: Path) -> None:
    alice = await people("alice")
    async with running(ircd, tmp_path, operators=[f"irc:{alice.nick}"], viewers=[]) as bot:
        await alice.join(bot.channel)
        await told(alice, bot.channel, "!watch", bot=bot.nick, until="This room watches: every new pet.")
        await bot.service.client.create_pet(name="Announced-Rex", category_id=1)
        await heard(alice, "Announced-Rex")


async def test_a_schedule_posts_in_the_channel(ircd: NgircdServer, people: People, tmp_path: Path) -> None:
    alice, clock = await people("alice"), Clock()
    async with running(ircd, tmp_path, operators=[f"irc:{alice.nick}"], viewers=[], clock=clock) as bot:
        await alice.join(bot.channel)
        made = await told(alice, bot.channel, "!every 1m /list available --limit 2", bot=bot.nick, until="Schedule 1")
        assert made.startswith("Schedule 1: every 1m (UTC) /list available --limit 2"), made
        clock.ahead = 61.0  # past its first run: it posts at the notifier's next step, not up to a minute later
        posted = f"Schedule 1 (every 1m, by irc:{alice.nick}): /list available --limit 2"
        await heard(alice, posted)


async def test_the_runtime_comes_back_after_the_server_restarts(
    ircd: NgircdServer, people: People, tmp_path: Path
) -> None:
    alice = await people("alice")
    async with running(ircd, tmp_path, operators=[f"irc:{alice.nick}"], viewers=[]) as bot:
        await alice.join(bot.channel)
        await told(alice, bot.channel, "!whoami", bot=bot.nick, until="may run")
        reach = bot.transport.reach
        ircd.stop()
        await asyncio.wait_for(reach.wait_down(), WAIT)
        start(ircd)
        await asyncio.wait_for(reach.wait_up(), WAIT)
        again = await in_channel(people, bot.channel, "alice")
        who = await told(again, bot.channel, "!whoami", bot=bot.nick, until="may run")
        assert f"you      irc:{again.nick}" in who and f"where    irc:{bot.channel.lower()}" in who, who
