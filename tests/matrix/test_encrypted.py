"""Encrypted rooms and DMs against a real Synapse, with a person on matrix-nio's e2e extra: the bot reads and
answers encrypted, keeps one device across restarts, asks for a re-send of what it cannot decrypt, gives a new
device of the person the next room key (trust on first use) or, with key_sharing = "verified", only listed ones."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from nio import MegolmEvent, RoomMessageNotice

from matrix.conftest import Account, BotRunner, register
from matrix.cs_client import MatrixUser
from matrix.e2e_person import E2EPerson
from matrix.synapse_server import SynapseServer
from petstore_bot.matrix import UNDECRYPTABLE
from petstore_bot.matrix_crypto import Crypto

pytestmark = pytest.mark.slow


@pytest.fixture
async def devices(homeserver: SynapseServer, tmp_path: Path) -> AsyncIterator[Callable[..., object]]:
    """``await devices(account, "laptop")``: one more e2e device of ``account`` (its own store), closed at teardown."""
    made: list[E2EPerson] = []

    async def make(account: Account, name: str) -> E2EPerson:
        found = await E2EPerson.login(
            base_url=homeserver.url, user_id=account.user_id, password=account.password, store=tmp_path / name
        )
        made.append(found)
        return found

    yield make
    for found in made:
        await found.aclose()


@pytest.fixture
def person(homeserver: SynapseServer, devices: Callable[..., Awaitable[E2EPerson]]) -> Callable[[str], object]:
    """``await person("alice")``: a new account's e2e device."""

    async def make(name: str) -> E2EPerson:
        return await devices(register(homeserver, name), name)

    return make


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


def fingerprint(device: E2EPerson) -> str:
    """The device as ``[bot.matrix] verified_devices`` lists it: user, device id, ed25519 key."""
    return f"{device.user_id} {device.client.device_id} {device.client.olm.account.identity_keys['ed25519']}"


async def copy_of_reply(device: E2EPerson, asked: str, *, sender: str) -> object:
    """The bot's reply to ``asked`` as ``device`` received it: decrypted, or a MegolmEvent it has no key for."""

    def found() -> object:
        for event in device.received:
            relates = event.source.get("content", {}).get("m.relates_to", {})
            if event.sender == sender and relates.get("m.in_reply_to", {}).get("event_id") == asked:
                return event
        return None

    return await device.until(found, what=f"the reply to {asked} on {device.client.device_id}")


async def test_a_new_device_of_the_person_can_read_the_next_reply(bot: BotRunner, devices) -> None:
    """Trust on first use: a device that appears after the room key went out gets the next reply's key."""
    alice = register(bot.server, "alice")
    phone: E2EPerson = await devices(alice, "phone")
    me = bot.account.user_id
    async with bot.running():
        room = await phone.create_room(invite=[me])
        await phone.knows_device_of(me, room)
        first = await phone.send(room, "!hello")
        await phone.until(lambda: phone.replies_to(first, sender=me), what="the answer on the phone")
        laptop: E2EPerson = await devices(alice, "laptop")
        await laptop.until(lambda: laptop.joined(me, room) and laptop.devices_of(me), what="the laptop's view")
        asked = await laptop.send(room, "!again")
        reply = await copy_of_reply(laptop, asked, sender=me)
        assert isinstance(reply, RoomMessageNotice) and reply.decrypted and reply.body == "AGAIN", reply


async def test_verified_only_gives_an_unverified_device_no_room_key_until_it_is_listed(bot: BotRunner, devices) -> None:
    """key_sharing = "verified": the person's unlisted device gets the bot's reply but no key for it; once its
    fingerprint is in verified_devices (the bot restarted with it), it reads the bot's next reply."""
    alice = register(bot.server, "alice")
    phone: E2EPerson = await devices(alice, "phone")
    laptop: E2EPerson = await devices(alice, "laptop")
    me = bot.account.user_id
    only_phone = Crypto(key_sharing="verified", verified_devices=[fingerprint(phone)])
    async with bot.running(crypto=only_phone):
        room = await phone.create_room(invite=[me])
        await phone.knows_device_of(me, room)
        await laptop.until(lambda: laptop.joined(me, room) and laptop.devices_of(me), what="the laptop's view")
        asked = await laptop.send(room, "!hello")  # the bot reads an unverified device's message
        on_phone = await copy_of_reply(phone, asked, sender=me)
        assert isinstance(on_phone, RoomMessageNotice) and on_phone.body == "HELLO"
        on_laptop = await copy_of_reply(laptop, asked, sender=me)
        assert isinstance(on_laptop, MegolmEvent), "the unverified laptop got no room key"
    both = Crypto(key_sharing="verified", verified_devices=[fingerprint(phone), fingerprint(laptop)])
    async with bot.running(crypto=both):
        asked = await laptop.send(room, "!again")
        on_laptop = await copy_of_reply(laptop, asked, sender=me)
        assert isinstance(on_laptop, RoomMessageNotice) and on_laptop.body == "AGAIN", on_laptop
