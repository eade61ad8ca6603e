"""One ``petstore bot`` process on IRC and Matrix at once (no platform named: every ``[bot.<platform>]`` the config
sets): a real ngIRCd and a real Synapse, one state store, one audit log, one lease. A request for approval asked in an
IRC channel is posted in the Matrix approvals room and approved there by a Matrix user."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from matrix.bot_process import BotConfig, BotProcess, approve_posted, audit_ok
from matrix.conftest import homeserver, register, synapse  # noqa: F401 -- the session's Synapse, as fixtures
from matrix.cs_client import MatrixUser
from matrix.synapse_server import SynapseServer

from ircd.conftest import nick
from ircd.ngircd_server import NgircdServer
from ircd.person import Person

pytestmark = pytest.mark.slow


async def test_a_request_asked_on_irc_is_approved_in_the_matrix_approvals_room(
    homeserver: SynapseServer,  # noqa: F811
    ircd: NgircdServer,
    people: Callable[[str], Awaitable[Person]],
    tmp_path: Path,
) -> None:
    petbot, olga = register(homeserver, "petbot"), register(homeserver, "olga")
    bot_nick, channel = nick("petbot"), f"#{nick('ops')}"
    alice = await people("alice")
    await alice.join(channel)
    owner = await MatrixUser.login(base_url=homeserver.url, user_id=olga.user_id, password=olga.password)
    ops = await owner.create_room(invite=[petbot.user_id])
    assert ircd.password is not None
    config = BotConfig(
        homeserver=homeserver.url,
        user_id=petbot.user_id,
        root=tmp_path,
        rooms=[ops],
        operators=[olga.user_id, f"irc:{alice.nick}"],
        extra={
            "bot": {"approvals": ["sandbox"], "approvals_room": ops},
            "bot.irc": {
                "server": "127.0.0.1",
                "port": ircd.port,
                "tls": False,
                "nick": bot_nick,
                "channels": [channel],
                "identify": "nick",
            },
        },
    )
    bot = BotProcess(
        config, password=petbot.password, env={"PETSTORE_BOT__IRC__PASSWORD": ircd.password}, every_platform=True
    )
    try:
        bot.start()
        await bot.logged(f"ready: answering new messages as {bot_nick}")
        await bot.logged(f"ready: answering new messages as {petbot.user_id}")
        await owner.wait_membership(ops, petbot.user_id, "join")
        told = "\n".join(await alice.ask(channel, "!add Crossed --category 1", bot=bot_nick))
        code = await approve_posted(owner, ops, told, bot_id=petbot.user_id)
    finally:
        code_exit = bot.stop()
        await owner.aclose()
    assert code_exit == 0, bot.log()[-3000:]
    done = audit_ok(config.audit_log, code)
    assert done["actor"] == f"irc:{alice.nick}" and done["approver"] == olga.user_id
