"""The bot core through the in-memory chat backend over the real sandbox: roles, confirmation, audit, state."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable

import pytest
from holds_support import held_writes

from bot_commands.commands import default_registry
from bot_commands.policy import Access, Actor, Policy, Role
from bot_commands.session import CommandSession
from petstore_bot.chat import Incoming
from petstore_bot.core import BotCore
from petstore_bot.pending import StoredPending
from petstore_bot.ratelimit import RateLimiter, Verdict
from petstore_bot.roles import RoleBook
from petstore_bot.rules import CHAT_HISTORY, bot_policy
from petstore_bot.settings import BotSettings, parse_rate_limit
from petstore_bot.testing import ChatRoom
from petstore_os.records import replace

from .conftest import ALICE, BOB, CAROL, OSCAR, Bot

CODE = re.compile(r"confirm ([A-Z0-9]{4}) within")


def code_in(text: str) -> str:
    found = CODE.search(text)
    assert found, text
    return found[1]


async def test_a_viewer_reads_but_a_write_is_refused_in_one_line_and_nothing_is_sent(bot: Bot) -> None:
    before = await bot.pet_count()
    assert "Whiskers" in await bot.room.text(BOB, "!list --limit 5")
    refused = await bot.room.text(BOB, '!add "Rex the Dog" --category 3')
    assert refused == "Not allowed: !add needs the operator role in this room; you have viewer (ask an operator)"
    assert await bot.pet_count() == before
    entry = json.loads(bot.audit_lines()[-1])
    assert (entry["actor"], entry["outcome"], entry["applied"]) == (BOB, "refused", "no")


async def test_help_lists_only_what_the_asker_may_run(bot: Bot) -> None:
    viewer, operator = await bot.room.text(BOB, "!help"), await bot.room.text(ALICE, "!help")
    assert "!list" in viewer and "!add" not in viewer and "!confirm" not in viewer
    assert "!add NAME --category ID" in operator and "!confirm CODE" in operator
    for text in (viewer, operator):  # terminal-only commands are never offered in chat
        assert "!quit" not in text and "!history" not in text


async def test_default_role_none_may_ask_who_they_are_and_nothing_from_the_service(
    make_bot: Callable[..., Bot],
) -> None:
    bot = make_bot('default_role = "none"')
    assert (
        await bot.room.text(CAROL, "!list")
        == "Not allowed: !list needs the viewer role in this room; you have none (ask an operator)"
    )
    whoami = await bot.room.text(CAROL, "!whoami")
    assert "role     none" in whoami and "matrix:!room:test" in whoami


async def test_a_confirmation_shows_every_field_it_sends_in_full_and_escaped(bot: Bot) -> None:
    name = "<b>Tom</b> the very long named cat of the ops team's third floor kitchen"
    asked = await bot.core.handle(
        Incoming(
            platform="matrix",
            room="!r:test",
            user=ALICE,
            event_id="$1",
            text=f'!add "{name}" --category 1 --status sold',
        )
    )
    assert asked is not None and asked.html is not None
    assert asked.text.endswith(f"It sends:\nname        {name}\ncategoryId  1\nstatus      sold")
    assert "&lt;b&gt;Tom&lt;/b&gt; the very long named cat of the ops team&#x27;s third floor kitchen" in asked.html
    assert "<b>" not in asked.html and "…" not in asked.text
    assert "<th>status</th><td>sold</td>" in asked.html.replace(' class="status-sold"', "")


async def test_a_write_runs_once_after_the_same_users_confirmation(bot: Bot) -> None:
    before = await bot.pet_count()
    ask = await bot.room.text(ALICE, "!add Rex --category 3")
    assert ask.startswith("To add a pet, reply !confirm ") and ask.endswith("It sends:\nname        Rex\ncategoryId  3")
    assert await bot.pet_count() == before  # nothing sent before the confirmation
    code = code_in(ask)
    other = await bot.room.text(OSCAR, f"!confirm {code}")
    assert other.startswith("Nothing to confirm: nothing waits for code")
    done = await bot.room.text(ALICE, f"!confirm {code.lower()}")
    assert "Rex" in done and await bot.pet_count() == before + 1
    again = await bot.room.text(ALICE, f"!confirm {code}")
    assert again == f"Nothing to confirm: code {code} was already confirmed: a code works once"
    assert await bot.pet_count() == before + 1
    lines = [json.loads(line) for line in bot.audit_lines()]
    assert [(e["actor"], e["outcome"]) for e in lines] == [
        (ALICE, "pending"),
        (OSCAR, "refused"),
        (ALICE, "ok"),
        (ALICE, "refused"),
    ]
    assert lines[2]["line"] == f"/confirm {code.lower()}: /add Rex --category 3"
    assert lines[2]["where"] == "matrix:!room:test" and isinstance(lines[2]["pet_id"], int)


async def test_a_confirmation_code_expires(make_bot: Callable[..., Bot]) -> None:
    bot = make_bot()
    now = [1000.0]
    policy = bot_policy(bot.composition.policy, bot.settings)
    roles = RoleBook.of(operators=[ALICE], viewers=[], default="viewer")
    pending = held_writes(bot.state.database, roles=roles, seal=bot.state.pending.seal, clock=lambda: now[0])
    core = BotCore(
        sessions=lambda actor: _session_with_clock(bot, actor, policy, pending),
        roles=roles,
        limiter=RateLimiter(bot.settings.rate),
        platform="matrix",
    )
    room = ChatRoom(core.handle)
    before = await bot.pet_count()
    code = code_in(await room.text(ALICE, "!add Late --category 1"))
    now[0] += 61.0
    expired = await room.text(ALICE, f"!confirm {code}")
    assert expired == f"Nothing to confirm: code {code} expired after 60 s; nothing was sent: run the command again"
    assert await bot.pet_count() == before


def _session_with_clock(bot: Bot, actor: Actor, policy: Policy, pending: StoredPending) -> CommandSession:
    c = bot.composition
    return CommandSession(
        c.client,
        env=c.env,
        registry=c.registry,
        actor=actor,
        policy=policy,
        audit=c.audit,
        confirm_ttl=60.0,
        pending=pending,
    )


async def test_confirm_writes_false_writes_at_once_but_never_on_production() -> None:
    off = BotSettings(confirm_writes=False)
    assert not bot_policy(Policy(), off).needs_confirmation(Access.WRITE)
    assert bot_policy(Policy(production=True), off).needs_confirmation(Access.WRITE)
    assert bot_policy(Policy(), BotSettings()).needs_confirmation(Access.WRITE)


async def test_a_message_delivered_twice_is_not_done_twice(
    make_bot: Callable[..., Bot], caplog: pytest.LogCaptureFixture
) -> None:
    bot = make_bot("confirm_writes = false")
    before = await bot.pet_count()
    first = await bot.room.say(ALICE, "!add Twice --category 2", event_id="$same")
    with caplog.at_level(logging.INFO, logger="petstore_bot"):
        again = await bot.room.say(ALICE, "!add Twice --category 2", event_id="$same")
    assert "'/add Twice --category 2' -> PetCreated (the service's replay: nothing new)" in caplog.text
    assert first is not None and again is not None
    assert await bot.pet_count() == before + 1
    ids = {re.findall(r"id\s+(\d+)", r.text)[0] for r in (first, again)}
    assert len(ids) == 1
    (pet_id,) = ids
    assert first.text.startswith(f"Added pet {pet_id}\n")  # the second delivery says it created nothing
    said = f"Pet {pet_id} was already added by this same request; nothing new was created"
    assert again.text.startswith(f"{said}\nPet {pet_id}\n") and again.html is not None and said in again.html
    other = await bot.room.say(ALICE, "!add Twice --category 2", event_id="$other")
    assert other is not None and await bot.pet_count() == before + 2 and "already added" not in other.text
    audit = [json.loads(line) for line in bot.audit_lines()]
    assert [(e["applied"], e.get("replayed", False)) for e in audit] == [("yes", False), ("yes", True), ("yes", False)]


async def test_state_is_per_room_and_user(bot: Bot) -> None:
    assert "Not found" not in await bot.room.text(ALICE, "!get 3")
    assert "Tweety" in await bot.room.text(ALICE, "!get $last")
    assert (await bot.room.text(BOB, "!get $last")).startswith("Usage: $last has no value yet")
    other_room = ChatRoom(bot.core.handle, room="!other:test")
    await bot.room.text(ALICE, "!list --limit 2")
    assert "Tweety" in await bot.room.text(ALICE, "!more")
    assert "No more pages: run !list first" in await bot.room.text(BOB, "!more")  # another person: their own /more
    assert "No more pages: run !list first" in await other_room.text(ALICE, "!more")  # the same person in another room


async def test_service_text_is_data_in_the_plain_and_the_html_body(make_bot: Callable[..., Bot]) -> None:
    bot = make_bot("confirm_writes = false")
    hostile = "<b>x</b> @room [link](http://x) \x1b[31mred"
    created = await bot.room.say(ALICE, f"!add {json.dumps(hostile)} --category 1")
    assert created is not None and created.html is not None
    listed = await bot.room.say(ALICE, "!list --limit 100")
    assert listed is not None and listed.html is not None
    for reply in (created, listed):
        assert "<b>x</b> @room [link](http://x)" in reply.text and "\x1b" not in reply.text
        assert "<b>" not in reply.html and "<a" not in reply.html and "\x1b" not in reply.html  # type: ignore[operator]
        assert "&lt;b&gt;x&lt;/b&gt; @room [link](http://x)" in reply.html  # type: ignore[operator]


async def test_env_shows_the_key_masked_and_no_reply_carries_it(bot: Bot) -> None:
    env = await bot.room.text(BOB, "!env")
    assert "API key      sk-..." in env
    replies = [env, await bot.room.text(ALICE, "!whoami"), await bot.room.text(ALICE, "!help env")]
    assert bot.data_dir is not None
    secret = (bot.data_dir / "api-key").read_text(encoding="ascii").strip()
    assert secret.startswith("sk-")
    assert all(secret not in text for text in replies)


async def test_only_messages_with_the_prefix_and_a_command_are_answered(bot: Bot) -> None:
    for text in ("hello", "!", "! list", "!!", "list", "!123"):
        assert await bot.room.say(ALICE, text) is None, text
    assert "unknown command !lsit; did you mean !list? !help lists the commands" in await bot.room.text(ALICE, "!lsit")
    assert "Whiskers" in await bot.room.text(ALICE, "!/list --limit 3")


async def test_a_failed_command_is_one_reply_and_the_bot_goes_on(bot: Bot) -> None:
    assert await bot.room.text(ALICE, "!get 999999") == "Not found: no pet with id '999999'"
    usage = await bot.room.text(ALICE, "!list bogus")
    assert usage.splitlines()[1] == "usage: !list [STATUS] [--status S] [--limit N] [--all]"
    assert "Rex" in await bot.room.text(ALICE, "!get 1")


async def test_read_only_refuses_writes_for_operators_too(make_bot: Callable[..., Bot]) -> None:
    bot = make_bot(top="read_only = true")
    refused = await bot.room.text(ALICE, "!add Rex --category 1")
    assert refused.startswith("Read-only session: refused to add pet 'Rex' (category 1); nothing was sent")


async def test_the_rate_limit_answers_once_then_stays_silent_until_it_calms_down() -> None:
    now = [0.0]
    limiter = RateLimiter(parse_rate_limit("3/10s"), clock=lambda: now[0])
    verdicts = [limiter.check(ALICE) for _ in range(5)]
    assert verdicts == [Verdict.RUN] * 3 + [Verdict.WARN, Verdict.DROP]
    assert limiter.check(BOB) is Verdict.RUN  # per person
    now[0] = 10.0
    assert [limiter.check(ALICE) for _ in range(4)] == [Verdict.RUN] * 3 + [Verdict.WARN]


def test_over_the_rate_limit_a_private_reply_is_given_every_time() -> None:
    """A reply the sender alone sees (a slash command's) floods no room: each message over the limit gets one."""
    limiter = RateLimiter(parse_rate_limit("2/10s"), clock=lambda: 0.0)
    assert [limiter.check(ALICE, private=True) for _ in range(5)] == [Verdict.RUN] * 2 + [Verdict.WARN] * 3
    assert limiter.check(ALICE) is Verdict.DROP  # the same person in a room: already told


async def test_the_rate_limit_reply_through_the_core(make_bot: Callable[..., Bot]) -> None:
    bot = make_bot()
    core = BotCore(
        sessions=lambda actor: bot.composition.session(actor=actor),
        roles=RoleBook.of(operators=[], viewers=[], default="viewer"),
        limiter=RateLimiter(parse_rate_limit("2/1h")),
        platform="matrix",
    )
    room = ChatRoom(core.handle)
    answers = [await room.say(BOB, "!whoami") for _ in range(4)]
    assert [a is not None for a in answers] == [True, True, True, False]
    assert answers[2] is not None
    assert answers[2].text == "Slow down: at most 2 commands in 3600 s per person; yours are ignored until then."


def test_every_registry_command_is_either_offered_in_chat_or_terminal_only() -> None:
    policy = bot_policy(Policy(), BotSettings(approvals=["sandbox"]), env="sandbox")
    admin = replace(_operator(), role=Role.ADMIN)
    for command in default_registry().commands():
        assert (command.access is Access.TERMINAL) != policy.allows(command.access, admin), command.name
        assert policy.allows(command.access, _operator()) == (command.access not in (Access.TERMINAL, Access.ADMIN))


def _operator() -> Actor:
    return Actor(id=ALICE, role=Role.OPERATOR, where="matrix:!r")


async def test_a_waiting_write_can_be_cancelled_by_the_person_asked_only(bot: Bot) -> None:
    before = await bot.pet_count()
    code = code_in(await bot.room.text(ALICE, "!add Maybe --category 1"))
    assert (await bot.room.text(OSCAR, f"!cancel {code}")).startswith("Nothing to confirm: nothing waits for code")
    assert (
        await bot.room.text(ALICE, f"!cancel {code}")
        == f"Cancelled: add pet 'Maybe' (category 1) (code {code}); nothing was sent."
    )
    assert (await bot.room.text(ALICE, f"!confirm {code}")).startswith("Nothing to confirm")
    assert await bot.pet_count() == before
    last = json.loads(bot.audit_lines()[-2])
    assert (last["line"], last["outcome"], last["applied"]) == (
        f"/cancel {code}: /add Maybe --category 1",
        "cancelled",
        "no",
    )


async def test_reads_are_logged_only_when_verbose_writes_and_refusals_always(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="petstore_bot"):
        await bot.room.text(BOB, "!list --limit 1")
        await bot.room.text(BOB, "!whoami")
        await bot.room.text(BOB, "!add Rex --category 3")
        await bot.room.text(ALICE, "!add Rex --category 3")
    lines = [r.getMessage() for r in caplog.records if r.name == "petstore_bot"]
    assert not any("'/list --limit 1'" in line or "'/whoami'" in line for line in lines), lines
    assert any(BOB in line and "'/add Rex --category 3' -> forbidden" in line for line in lines), lines
    assert any(ALICE in line and "-> ConfirmationNeeded" in line for line in lines), lines
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="petstore_bot"):
        await bot.room.text(BOB, "!list --limit 1")
    assert any("'/list --limit 1' -> " in r.getMessage() and r.levelno == logging.DEBUG for r in caplog.records)


async def test_a_long_conversation_keeps_only_its_latest_commands(bot: Bot) -> None:
    for n in range(CHAT_HISTORY + 5):
        await bot.room.text(BOB, f"!list --limit {n % 3 + 1}")
    session = bot.core.session_of(room=bot.room.room, user=BOB)
    assert session is not None and len(session.entries) == CHAT_HISTORY
    last = CHAT_HISTORY + 4
    assert session.entries[-1].line == f"/list --limit {last % 3 + 1}"
    assert session.entries[0].line == f"/list --limit {5 % 3 + 1}"  # the first five are gone


async def test_invisible_characters_in_a_name_are_shown_in_a_reply(bot: Bot) -> None:
    """A zero-width space and a right-to-left override from the service are seen as they are, in text and HTML."""
    pet = (await bot.composition.client.create_pet(name="Zero\u200bWidth \u202eevil", category_id=1)).pet
    reply = await bot.room.say(BOB, f"!get {pet.id}")
    assert reply is not None and reply.html is not None
    for shown in (reply.text, reply.html):
        assert "Zero<U+200B>Width" in shown.replace("&lt;", "<").replace("&gt;", ">"), shown
        assert "<U+202E>evil" in shown.replace("&lt;", "<").replace("&gt;", ">"), shown
        assert "\u200b" not in shown and "\u202e" not in shown
    listed = await bot.room.text(BOB, "!list --limit 100")
    assert "Zero<U+200B>Width <U+202E>evil" in listed and "\u200b" not in listed
