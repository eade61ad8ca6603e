"""Two real ``petstore bot irc`` processes of one bot on a real ngIRCd, sharing one PostgreSQL ``[bot] state`` (a
database of the test's own) and one sandbox: one answers; when it is killed with SIGKILL, the other takes the lease
and answers what comes next, once. The process helpers are tests/matrix's (:class:`BotProcess`), for IRC."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from matrix.bot_process import LEASE_TTL, BotConfig, BotProcess
from pg_support import database_url, start_pg_server

from ircd.conftest import nick
from ircd.ngircd_server import NgircdServer
from ircd.person import Person

pytestmark = pytest.mark.slow

People = Callable[[str], Awaitable[Person]]
#: The key every replica seals held writes with.
REPLICAS_KEY = "replicas-share-this-approval-key-0123"


class IrcBotProcess(BotProcess):
    """``petstore bot irc``: the server password through ``PETSTORE_BOT__IRC__PASSWORD``."""

    platform = "irc"


@pytest.fixture
def state_url() -> Iterator[str]:
    with start_pg_server() as server, database_url(server) as url:
        yield url


def replica(ircd: NgircdServer, root: Path, *, bot_nick: str, channel: str, state: str, operator: str) -> BotProcess:
    assert ircd.password is not None
    config = BotConfig(
        homeserver="",
        user_id="",
        root=root,
        operators=[operator],
        extra={
            "bot": {"state": state, "approval_key": REPLICAS_KEY, "lease_ttl": LEASE_TTL},
            "sandbox": {"data_dir": str(root.parent / "sandbox")},
            "bot.irc": {
                "server": "127.0.0.1",
                "port": ircd.port,
                "tls": False,
                "nick": bot_nick,
                "channels": [channel],
                "identify": "nick",
                "flood_rate": 3.0,
            },
        },
    )
    return IrcBotProcess(config, password=ircd.password, args=["-v"])


async def test_two_replicas_one_answers_and_when_it_is_killed_the_other_does(
    ircd: NgircdServer, people: People, tmp_path: Path, state_url: str
) -> None:
    bot_nick, channel = nick("petbot"), f"#{nick('ops')}"
    alice = await people("alice")
    await alice.join(channel)
    made = {
        name: replica(
            ircd, tmp_path / name, bot_nick=bot_nick, channel=channel, state=state_url, operator=f"irc:{alice.nick}"
        )
        for name in ("first", "second")
    }
    first = made["first"].start()
    try:
        await asyncio.to_thread(first.ready)
        await first.logged("lease irc ")  # it holds the lease before the second starts
        second = made["second"].start()
        await asyncio.to_thread(second.ready)
        since = alice.say(channel, "!env")
        await alice.wait_for(since, nick=bot_nick, where=channel)
        first.crash()  # SIGKILL: no goodbye, the lease left to expire (!env may be answered again: never lost)
        since = alice.say(channel, "!whoami")
        alice.say(channel, "!list --limit 1")  # answered after the whole of !whoami's answer (one lane a person)
        await alice.until(lambda: any(s.text.startswith("id  name") for s in alice.said[since:]), what="the list")
        whoami = [s for s in alice.said[since:] if s.text.startswith("you ")]
        assert [(s.nick, s.text) for s in whoami] == [(f"{bot_nick}_", f"you      irc:{alice.nick}")]  # once
    finally:
        first.crash()
        code = made["second"].stop() if made["second"].process is not None else 0
    assert code == 0, made["second"].log()[-3000:]
