"""Encrypted rooms and DMs against a real Synapse, with a person on matrix-nio's e2e extra: the bot reads and
answers encrypted, keeps one device across restarts, and asks for a re-send of what it cannot decrypt."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from matrix.conftest import BotRunner, register
from matrix.cs_client import MatrixUser
from matrix.e2e_person import E2EPerson
from matrix.synapse_server import SynapseServer
from petstore_bot.matrix import UNDECRYPTABLE

pytestmark = pytest.mark.slow


@pytest.fixture
async def person(homeserver: SynapseServer, tmp_path: Path) -> AsyncIterator[Callable[[str], object]]:
    made: list[E2EPerson] = []

    async def make(name: str) -> E2EPerson:
        account = register(homeserver, name)
        found = await E2EPerson.login(
            base_url=homeserver.url, user_id=account.user_id, password=account.password, store=tmp_path / name
        )
        made.append(found)
        return found

    yield make
    for found in made:
        await found.aclose()


def bot_device(bot: BotRunner) -> str:
    [state] = bot.state_dir.glob("matrix-*.json")
    return str(json.loads(state.read_text(encoding="utf-8"))["device_id"])


async def test_an_encrypted_room_is_read_and_answered_and_a_restart_keeps_the_device(bot: BotRunner, person) -> None:
    alice: E2EPerson = await person("alice")
    me = bot.account.user_id
    async with bot.running():
        room = await alice.create_room(invite=[me])
        await alice.knows_device_of(me, room)
        asked = await alice.send(room, "!hello")
        [reply] = await alice.until(lambda: alice.replies_to(asked, sender=me), what="the answer")
        assert reply.decrypted and reply.body == "HELLO", "the answer is encrypted too"
        device = bot_device(bot)
        assert alice.devices_of(me) == {device}
        stores = list(bot.state_dir.glob("*.db"))
        assert stores and all(p.stat().st_mode & 0o077 == 0 for p in stores), "the crypto store is 0600"
    async with bot.running():
        again = await alice.send(room, "!again")
        [second] = await alice.until(lambda: alice.replies_to(again, sender=me), what="the answer after a restart")
        assert second.decrypted and second.body == "AGAIN"
    assert bot_device(bot) == device
    assert alice.devices_of(me) == {device}, "no new device seen by the person"


async def test_an_encrypted_dm_takes_the_bare_command_and_an_undecryptable_message_gets_one_line(
    bot: BotRunner, person
) -> None:
    alice: E2EPerson = await person("alice")
    me = bot.account.user_id
    async with bot.running():
        dm = await alice.create_room(invite=[me], direct=True)
        await alice.knows_device_of(me, dm)
        asked = await alice.send(dm, "hello")
        [reply] = await alice.until(lambda: alice.replies_to(asked, sender=me), what="the answer")
        assert reply.decrypted and reply.body == "HELLO"
        garbled = {
            "algorithm": "m.megolm.v1.aes-sha2",
            "ciphertext": "AwgAEiBn0t4v4l1dc1ph3rt3xt",
            "device_id": alice.client.device_id,
            "sender_key": alice.client.olm.account.identity_keys["curve25519"],
            "session_id": "no-such-session",
        }
        raw = MatrixUser(base_url=bot.server.url, user_id=alice.user_id, access_token=alice.client.access_token)
        try:  # sent as is, over the client-server API: an encrypted event no device can decrypt
            broken = await raw.send(dm, garbled, event_type="m.room.encrypted")
        finally:
            await raw.http.aclose()
        [line] = await alice.until(lambda: alice.replies_to(broken, sender=me), what="the re-send line")
        assert line.body == UNDECRYPTABLE
