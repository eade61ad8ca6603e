"""The transport stays up: bad bodies, a failing handler, restarts of itself and of Synapse, encrypted rooms, secrets."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from matrix.conftest import BotRunner
from matrix.cs_client import POLL, MatrixUser, from_sender, replies_to
from petstore_bot.chat import Handler, Incoming, Reply
from petstore_bot.matrix import ENCRYPTED, INTERNAL_ERROR, NOT_TEXT, TOO_LONG, MatrixError
from petstore_bot.matrix_crypto import Crypto

pytestmark = pytest.mark.slow


async def _answered(user: MatrixUser, room: str, asked: str, bot: BotRunner) -> list[dict]:
    events = await user.wait_for(room, lambda ev: replies_to(ev, asked, sender=bot.account.user_id))
    return replies_to(events, asked, sender=bot.account.user_id)


async def _logged(caplog: pytest.LogCaptureFixture, text: str, *, deadline: float = 60.0) -> None:
    end = time.monotonic() + deadline
    while text not in caplog.text:
        assert time.monotonic() < end, f"{text!r} was never logged"
        await asyncio.sleep(POLL)


async def test_oversize_binary_and_garbled_bodies_do_not_kill_the_loop(bot: BotRunner, users) -> None:
    alice = await users("alice")
    room = await alice.create_room(invite=[bot.account.user_id])
    async with bot.running(rooms=[room], max_bytes=4096) as task:
        huge = await alice.send_text(room, "!" + "x" * 5000)
        binary = await alice.send_text(room, "!get \x00\x1b[31m\x01\x07\x7f")
        # Synapse refuses a body that is not a string, but passes malformed relations and formats through.
        await alice.send(room, {"msgtype": "m.text", "body": "!rel", "m.relates_to": "garbage"})
        await alice.send(room, {"msgtype": "m.text", "body": "!thread", "m.relates_to": {"rel_type": "m.thread"}})
        await alice.send(room, {"msgtype": "m.text", "body": "!fmt", "format": 3, "formatted_body": {"x": 1}})
        after = await alice.send_text(room, "!after")
        [reply] = await _answered(alice, room, after, bot)
        assert reply["content"]["body"] == "AFTER"
        assert not task.done()
    events = await alice.messages(room)
    assert [r["content"]["body"] for r in replies_to(events, huge, sender=bot.account.user_id)] == [
        TOO_LONG.format(limit=4096)
    ]
    assert [r["content"]["body"] for r in replies_to(events, binary, sender=bot.account.user_id)] == [NOT_TEXT]
    bodies = [e["content"]["body"] for e in from_sender(events, bot.account.user_id)]
    assert bodies[2:] == ["REL", "THREAD", "FMT", "AFTER"], "malformed relations and formats are answered plainly"


async def test_a_failing_handler_gets_one_line_and_the_loop_goes_on(bot: BotRunner, users, caplog) -> None:
    caplog.set_level(logging.INFO, logger="petstore_bot")
    alice = await users("alice")
    room = await alice.create_room(invite=[bot.account.user_id])
    password = bot.account.password

    async def flaky(message: Incoming) -> Reply | None:
        if message.text == "!boom":
            raise RuntimeError(f"exploded while holding {password}")
        return Reply(text=message.text.upper())

    async with bot.running(flaky, rooms=[room]):
        boom = await alice.send_text(room, "!boom")
        [failed] = await _answered(alice, room, boom, bot)
        nxt = await alice.send_text(room, "!next")
        [ok] = await _answered(alice, room, nxt, bot)
    assert failed["content"]["body"] == INTERNAL_ERROR
    assert "\n" not in failed["content"]["body"]
    assert ok["content"]["body"] == "!NEXT"
    assert "RuntimeError: exploded while holding ***" in caplog.text
    assert password not in caplog.text


async def test_a_restart_answers_nothing_twice_and_no_history(bot: BotRunner, users) -> None:
    alice = await users("alice")
    room = await alice.create_room(invite=[bot.account.user_id])
    await alice.send_text(room, "!before the first start")
    async with bot.running(rooms=[room]):
        first = await alice.send_text(room, "!first")
        await _answered(alice, room, first, bot)
    while_down = await alice.send_text(room, "!while down")
    async with bot.running(rooms=[room]):
        await _answered(alice, room, while_down, bot)
        last = await alice.send_text(room, "!last")
        await _answered(alice, room, last, bot)
    events = await alice.messages(room)
    assert [e["content"]["body"] for e in from_sender(events, bot.account.user_id)] == ["FIRST", "WHILE DOWN", "LAST"]


async def test_synapse_stopped_and_restarted_mid_session(bot: BotRunner, users, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="petstore_bot")
    alice = await users("alice")
    room = await alice.create_room(invite=[bot.account.user_id])
    async with bot.running(rooms=[room]) as task:
        one = await alice.send_text(room, "!one")
        await _answered(alice, room, one, bot)
        await asyncio.to_thread(bot.server.stop)
        await _logged(caplog, "sync failed")  # the transport saw the outage while the server was down
        await asyncio.to_thread(bot.server.start)
        two = await alice.send_text(room, "!two")
        await _answered(alice, room, two, bot)
        assert not task.done()
    events = await alice.messages(room)
    assert [e["content"]["body"] for e in from_sender(events, bot.account.user_id)] == ["ONE", "TWO"]


async def test_without_encryption_an_encrypted_room_gets_one_notice_then_silence(bot: BotRunner, users) -> None:
    alice = await users("alice")
    secret_room = await alice.create_room(invite=[bot.account.user_id], encrypted=True)
    plain_room = await alice.create_room(invite=[bot.account.user_id])
    ciphertext = {"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgA", "sender_key": "k", "session_id": "s"}
    async with bot.running(rooms=[secret_room, plain_room], crypto=Crypto(enabled=False)):
        await alice.wait_for(secret_room, lambda ev: from_sender(ev, bot.account.user_id))
        await alice.send(secret_room, ciphertext, event_type="m.room.encrypted")
        await alice.send_text(secret_room, "!plain text in an encrypted room")
        for word in ("!first", "!second"):  # two answered round trips: every earlier batch has been handled
            asked = await alice.send_text(plain_room, word)
            await _answered(alice, plain_room, asked, bot)
    async with bot.running(rooms=[secret_room, plain_room], crypto=Crypto(enabled=False)):
        asked = await alice.send_text(plain_room, "!after restart")
        await _answered(alice, plain_room, asked, bot)
    [notice] = from_sender(await alice.messages(secret_room), bot.account.user_id)
    assert notice["content"]["body"] == ENCRYPTED
    assert notice["content"]["msgtype"] == "m.notice"
    assert notice["content"]["m.mentions"] == {}


async def test_the_access_token_never_reaches_logs_or_the_room(bot: BotRunner, users, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    alice = await users("alice")
    room = await alice.create_room(invite=[bot.account.user_id])
    session = await MatrixUser.login(
        base_url=bot.server.url, user_id=bot.account.user_id, password=bot.account.password
    )
    token = session.access_token
    await session.aclose()

    async def leaky(message: Incoming) -> Reply | None:
        raise ValueError(f"token {token}")

    async with bot.running(leaky, rooms=[room], password=None, access_token=token):
        asked = await alice.send_text(room, "!anything")
        await _answered(alice, room, asked, bot)
    events = await alice.messages(room)
    assert token not in str(events)
    assert token not in caplog.text
    assert "token ***" in caplog.text
    assert all(token.encode() not in p.read_bytes() for p in bot.state_dir.iterdir()), "nor the state or crypto store"
    assert all(p.stat().st_mode & 0o077 == 0 for p in bot.state_dir.iterdir())


async def test_a_wrong_password_is_a_clear_error_without_the_secret(bot: BotRunner, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "pw-not-the-right-one-123"
    with pytest.raises(MatrixError) as info:
        async with bot.running(password=wrong):
            pass
    assert "M_FORBIDDEN" in str(info.value)
    assert wrong not in str(info.value)
    assert wrong not in caplog.text


async def test_stop_finishes_the_message_in_hand_and_a_restart_answers_the_rest_once(bot: BotRunner, users) -> None:
    alice = await users("alice")
    room = await alice.create_room(invite=[bot.account.user_id])
    stop, started, release = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def slow(message: Incoming) -> Reply | None:
        if message.text == "!slow":
            started.set()
            await release.wait()
        return Reply(text=message.text.upper())

    async with bot.running(slow, rooms=[room], stop=stop) as task:
        slow_id = await alice.send_text(room, "!slow")
        await started.wait()
        queued = await alice.send_text(room, "!queued")
        stop.set()
        release.set()
        await asyncio.wait_for(task, timeout=60)
    events = await alice.messages(room)
    assert [e["content"]["body"] for e in from_sender(events, bot.account.user_id)] == ["!SLOW"]
    async with bot.running(rooms=[room]):
        await _answered(alice, room, queued, bot)
    events = await alice.messages(room)
    assert [e["content"]["body"] for e in from_sender(events, bot.account.user_id)] == ["!SLOW", "QUEUED"]
    assert len(replies_to(events, slow_id, sender=bot.account.user_id)) == 1


def _held(started: asyncio.Event, release: asyncio.Event) -> Handler:
    """A handler answering ``!text`` with ``!TEXT``; ``!slow`` sets ``started``, then waits for ``release``."""

    async def slow(message: Incoming) -> Reply | None:
        if message.text == "!slow":
            started.set()
            await release.wait()
        return Reply(text=message.text.upper())

    return slow


async def test_one_persons_slow_command_holds_nobody_else_and_each_is_answered_once(bot: BotRunner, users) -> None:
    alice, bob = await users("alice"), await users("bob")
    room = await alice.create_room(invite=[bot.account.user_id, bob.user_id])
    await bob.join(room)
    started, release = asyncio.Event(), asyncio.Event()
    slow = _held(started, release)

    async with bot.running(slow, rooms=[room]):
        slow_id = await alice.send_text(room, "!slow")
        await started.wait()
        after_id = await alice.send_text(room, "!after")  # alice's next one waits for her first
        quick_id = await bob.send_text(room, "!quick")
        await _answered(bob, room, quick_id, bot)  # bob is answered while alice's command is in hand
        events = await bob.messages(room)
        assert [e["content"]["body"] for e in from_sender(events, bot.account.user_id)] == ["!QUICK"]
        release.set()
        await _answered(alice, room, after_id, bot)
    events = await alice.messages(room)
    assert [e["content"]["body"] for e in from_sender(events, bot.account.user_id)] == ["!QUICK", "!SLOW", "!AFTER"]
    async with bot.running(slow, rooms=[room]):  # a restart: the token on disk is past all three
        probe = await alice.send_text(room, "!probe")
        await _answered(alice, room, probe, bot)
    events = await alice.messages(room)
    for asked in (slow_id, after_id, quick_id, probe):
        assert len(replies_to(events, asked, sender=bot.account.user_id)) == 1


async def test_a_slow_command_in_one_room_holds_no_other_room(bot: BotRunner, users) -> None:
    alice = await users("alice")
    room_a = await alice.create_room(invite=[bot.account.user_id])
    room_b = await alice.create_room(invite=[bot.account.user_id])
    started, release = asyncio.Event(), asyncio.Event()
    slow = _held(started, release)

    async with bot.running(slow, rooms=[room_a, room_b]):
        slow_id = await alice.send_text(room_a, "!slow")
        await started.wait()
        quick_id = await alice.send_text(room_b, "!quick")
        await _answered(alice, room_b, quick_id, bot)  # room B answered while room A's command is in hand
        assert not from_sender(await alice.messages(room_a), bot.account.user_id)
        release.set()
        await _answered(alice, room_a, slow_id, bot)
