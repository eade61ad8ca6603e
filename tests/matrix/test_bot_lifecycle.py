"""The real ``petstore bot matrix`` stays up and ends cleanly: rate limit, a homeserver restart, SIGTERM, bad config.

Each test here runs its own bot process: one stops the homeserver, one ends the bot with SIGTERM.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest

from matrix.bot_process import ROOT, BotConfig, BotProcess, answered_once, ask, petstore_env, room_with
from matrix.conftest import Account, register
from matrix.cs_client import MatrixUser, from_sender, replies_to
from matrix.fault_proxy import FaultProxy
from matrix.synapse_server import SynapseServer
from petstore_bot.core import SLOW_DOWN

pytestmark = pytest.mark.slow


def _bot(server: SynapseServer, root: Path, *, operators: list[str], **options: object) -> BotProcess:
    account = register(server, "petbot")
    config = BotConfig(homeserver=server.url, user_id=account.user_id, root=root, operators=operators, **options)  # type: ignore[arg-type]
    return BotProcess(config, password=account.password, args=["--sandbox-reset"]).start().ready()


async def _login(server: SynapseServer, account: Account) -> MatrixUser:
    return await MatrixUser.login(base_url=server.url, user_id=account.user_id, password=account.password)


async def test_over_the_rate_limit_one_reply_then_silence_and_sigterm_exits_0(
    homeserver: SynapseServer, tmp_path: Path
) -> None:
    accounts = [register(homeserver, name) for name in ("alice", "olivia")]
    bot = _bot(homeserver, tmp_path, operators=[a.user_id for a in accounts], rate_limit="3/1h")
    alice, olivia = [await _login(homeserver, a) for a in accounts]
    try:
        room = await room_with(alice, bot.config.user_id, olivia)
        asked = [await alice.send_text(room, "!whoami") for _ in range(5)]
        # One person's messages are handled in order, but beside another person's: once alice's fourth is answered
        # (the refusal) her fifth comes next, and olivia's answer after that gives it time to show if it were sent.
        await alice.wait_for(room, lambda events: replies_to(events, asked[3], sender=bot.config.user_id))
        marker = await ask(olivia, room, "!whoami", bot_id=bot.config.user_id)
        assert marker["body"].startswith(f"you      {olivia.user_id}")
        events = await alice.messages(room)
        replies = [[r["content"]["body"] for r in replies_to(events, a, sender=bot.config.user_id)] for a in asked]
        assert [len(r) for r in replies] == [1, 1, 1, 1, 0]
        assert all(r[0].startswith(f"you      {alice.user_id}") for r in replies[:3]), replies
        assert replies[3] == [SLOW_DOWN.format(count=3, seconds=3600)]
        answered_once(events, bot.config.user_id)
    finally:
        code = bot.stop(deadline=20)  # SIGTERM mid long-poll: it returns promptly, not after the 30 s poll
        await alice.aclose()
        await olivia.aclose()
    log = bot.log()
    assert code == 0, log[-3000:]
    assert "petstore bot stopped" in log and "Traceback" not in log
    assert bot.password not in log and bot.sandbox_key() not in log


async def test_the_homeserver_restarts_mid_session_and_nothing_is_answered_twice(
    homeserver: SynapseServer, tmp_path: Path
) -> None:
    account = register(homeserver, "alice")
    bot = _bot(homeserver, tmp_path, operators=[account.user_id], confirm_writes=False)
    alice = await _login(homeserver, account)
    try:
        room = await room_with(alice, bot.config.user_id)
        start = bot.pet_count()
        before = await ask(alice, room, "!add Before --category 1", bot_id=bot.config.user_id)
        assert before["body"].startswith("Added pet 13\n")
        logged = len(bot.log())
        homeserver.stop()
        await bot.logged("sync failed", after=logged)  # the bot saw the outage
        homeserver.start()
        after = await ask(alice, room, "!add After --category 1", bot_id=bot.config.user_id)
        assert after["body"].startswith("Added pet 14\n")
        listing = await ask(alice, room, "!list --limit 100", bot_id=bot.config.user_id)
        assert re.findall(r"^\s*(\d+)\s+(Before|After)\s", listing["body"], re.M) == [("13", "Before"), ("14", "After")]
        assert bot.pet_count() == start + 2
        events = await alice.messages(room)
        assert len(from_sender(events, bot.config.user_id)) == 3
        answered_once(events, bot.config.user_id)
    finally:
        code = bot.stop()
        await alice.aclose()
    assert code == 0, bot.log()[-3000:]


async def test_a_write_that_reached_the_service_is_not_repeated_after_a_crash(
    homeserver: SynapseServer, tmp_path: Path
) -> None:
    """The bot crashes after the write but before its reply goes out (the homeserver refuses sends meanwhile);
    started again, it handles that message again: same pet, one reply saying nothing new was created, nothing added
    twice (Idempotency-Key), and the audit line of the second handling marked as the service's replay."""
    account, bot_account = register(homeserver, "alice"), register(homeserver, "petbot")
    proxy = await FaultProxy(homeserver.url).start()
    config = BotConfig(
        homeserver=proxy.url,
        user_id=bot_account.user_id,
        root=tmp_path,
        operators=[account.user_id],
        confirm_writes=False,
    )
    first = BotProcess(config, password=bot_account.password, args=["--sandbox-reset"]).start()
    again = BotProcess(config, password=bot_account.password)  # the same state dir and sandbox, not reset
    alice = await _login(homeserver, account)
    try:
        await asyncio.to_thread(first.ready)  # its login goes through the proxy, served by this loop
        room = await room_with(alice, bot_account.user_id)
        start = first.pet_count()
        proxy.refuse_sends = True
        asked = await alice.send_text(room, "!add Once --category 1")
        await asyncio.wait_for(proxy.refused.wait(), timeout=60)  # the reply was refused: the write is done
        assert first.pet_count() == start + 1
        first.crash()
        proxy.refuse_sends = False
        await asyncio.to_thread(again.start().ready)
        events = await alice.wait_for(room, lambda ev: replies_to(ev, asked, sender=bot_account.user_id))
        [reply] = replies_to(events, asked, sender=bot_account.user_id)
        said = "Pet 13 was already added by this same request; nothing new was created\nPet 13\n"
        assert reply["content"]["body"].startswith(said), reply["content"]["body"]
        assert again.pet_count() == start + 1, "the second run replayed the first write, it did not add another"
        audit = [(e["outcome"], e["applied"], e["pet_id"], e.get("replayed", False)) for e in again.audit()]
        assert audit == [("ok", "yes", 13, False), ("ok", "yes", 13, True)]
        answered_once(events, bot_account.user_id)
    finally:
        first.crash()
        code = await asyncio.to_thread(again.stop)
        await alice.aclose()
        await proxy.aclose()
    assert code == 0, again.log()[-3000:]


@pytest.mark.parametrize(
    ("section", "key", "expected"),
    [
        ('[bot]\nrate_limit = "lots"\n', "bot.rate_limit", "is not a rate"),
        ('[bot]\ndefault_role = "admin"\n', "bot.default_role", "'none', 'viewer' or 'operator'"),
        ('[bot.matrix]\nhomeserver = "ftp://x"\n', "bot.matrix.homeserver", "must start with https://"),
        ('[bot.matrix]\nhomeserver = "http://matrix.example.org"\n', "bot.matrix.homeserver", "use https://"),
        ('[bot.matrix]\nuser_id = "@petbot:localhost"\n', "[bot.matrix] homeserver", "PETSTORE_BOT__MATRIX__"),
        (
            '[bot.matrix]\nhomeserver = "http://127.0.0.1:9"\nuser_id = "@petbot:localhost"\n',
            "password or access_token",
            "PETSTORE_BOT__MATRIX__PASSWORD",
        ),
    ],
    ids=["rate", "role", "scheme", "clear-text", "no-homeserver", "no-secret"],
)
def test_bad_config_is_one_line_naming_the_key_and_exit_2(
    tmp_path: Path, section: str, key: str, expected: str
) -> None:
    config = tmp_path / "petstore.toml"
    config.write_text(section, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "petstore_cli", "bot", "matrix", "--config", str(config)],
        cwd=ROOT,
        env=petstore_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("petstore: ") and key in line and expected in line, line


def test_a_refused_login_is_one_line_without_the_password_and_exit_1(homeserver: SynapseServer, tmp_path: Path) -> None:
    account = register(homeserver, "petbot")
    wrong = "pw-wrong-" + account.password
    config = BotConfig(homeserver=homeserver.url, user_id=account.user_id, root=tmp_path)
    bot = BotProcess(config, password=wrong).start()
    assert bot.process is not None
    code = bot.process.wait(timeout=60)
    lines = [line for line in bot.log().splitlines() if line.startswith("petstore:")]
    assert code == 1, bot.log()
    assert len(lines) == 1 and "M_FORBIDDEN" in lines[0], bot.log()
    assert wrong not in bot.log() and "Traceback" not in bot.log()
