"""One ``petstore bot`` process on XMPP and Matrix at once (no platform named: every ``[bot.<platform>]`` the config
sets): a real Prosody and a real Synapse, one state store, one audit log, one lease. Both are answered; a request
for approval asked in an XMPP room is posted in the Matrix approvals room and approved there by a Matrix user."""

from __future__ import annotations

from pathlib import Path

import pytest
from matrix.bot_process import BotConfig, BotProcess, approve_posted, ask, audit_ok
from matrix.conftest import homeserver, register, synapse  # noqa: F401 -- the session's Synapse, as fixtures
from matrix.cs_client import MatrixUser
from matrix.synapse_server import SynapseServer

from xmpp.conftest import register as register_xmpp
from xmpp.person import Person
from xmpp.person import ask as ask_xmpp
from xmpp.prosody_server import ProsodyServer

pytestmark = pytest.mark.slow


async def test_one_process_answers_xmpp_and_matrix_and_an_xmpp_request_is_approved_in_matrix(
    homeserver: SynapseServer,  # noqa: F811
    prosody: ProsodyServer,
    people,
    room,
    tmp_path: Path,
) -> None:
    petbot, olga = register(homeserver, "petbot"), register(homeserver, "olga")
    xmpp_bot = register_xmpp(prosody, "petbot")
    alice: Person = await people("alice")
    await alice.join(room, "alice")
    owner = await MatrixUser.login(base_url=homeserver.url, user_id=olga.user_id, password=olga.password)
    ops = await owner.create_room(invite=[petbot.user_id])
    config = BotConfig(
        homeserver=homeserver.url,
        user_id=petbot.user_id,
        root=tmp_path,
        rooms=[ops],
        operators=[olga.user_id, f"xmpp:{alice.jid}"],
        extra={
            "bot": {"approvals": ["sandbox"], "approvals_room": ops},
            "bot.xmpp": {
                "jid": xmpp_bot.jid,
                "rooms": [room],
                "server": "127.0.0.1",
                "port": prosody.port,
                "tls": "off",
            },
        },
    )
    bot = BotProcess(
        config, password=petbot.password, env={"PETSTORE_BOT__XMPP__PASSWORD": xmpp_bot.password}, every_platform=True
    )
    try:
        bot.start()
        await bot.logged(f"ready: answering new messages as {xmpp_bot.jid}")
        await bot.logged(f"ready: answering new messages as {petbot.user_id}")
        await owner.wait_membership(ops, petbot.user_id, "join")
        assert f"xmpp:{alice.jid}" in await ask_xmpp(alice, room, "!whoami")
        assert olga.user_id in str((await ask(owner, ops, "!whoami", bot_id=petbot.user_id))["body"])

        told = await ask_xmpp(alice, room, "!add Crossed --category 1")
        code = await approve_posted(owner, ops, told, bot_id=petbot.user_id)
    finally:
        code_exit = bot.stop()
        await owner.aclose()
    assert code_exit == 0, bot.log()[-3000:]
    done = audit_ok(config.audit_log, code)
    assert done["actor"] == f"xmpp:{alice.jid}" and done["approver"] == olga.user_id
