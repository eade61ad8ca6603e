"""!watch and !every through the command layer: the port the bot gives a session (its store in SQLite), the sandbox
service in-process, announcements collected as a transport would post them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot_commands.policy import Actor, Role
from bot_commands.results import Help, ScheduleList, WatchList, WhoAmI
from bot_commands.session import CommandSession
from petstore_bot.chat import Reply
from petstore_bot.notifier import BotNotifications
from petstore_bot.scheduler import Scheduler, next_run_after
from petstore_bot.watcher import Watcher
from petstore_state import Database, open_database
from petstore_state.bounds import Limits
from petstore_state.schedules import Schedule, ScheduleStore
from petstore_state.watches import WatchStore


@dataclass
class Posted:
    """What ``announce`` was given, room by room."""

    posts: list[tuple[str, str, str | None]] = field(default_factory=list)

    async def __call__(self, room: str, reply: Reply, /, *, key: str | None = None) -> bool:
        self.posts.append((room, reply.text, key))
        return True


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Database]:
    db = open_database(None, state_dir=tmp_path)
    yield db
    db.close()


@pytest.fixture
def rig(
    database: Database, make_session: Callable[..., CommandSession]
) -> tuple[BotNotifications, Posted, Callable[[Actor], CommandSession]]:
    posted = Posted()
    first = make_session()
    watcher = Watcher(store=WatchStore(database, service="sandbox"), client=first.client, announce=posted)
    bot = BotNotifications(
        watcher=watcher, schedules=ScheduleStore(database, service="sandbox"), interval=2, timezone="Europe/Berlin"
    )

    def session(actor: Actor) -> CommandSession:
        return make_session(actor=actor, notifications=bot.for_actor(actor))

    return bot, posted, session


ALICE = Actor(id="@alice:x", role=Role.OPERATOR, where="matrix:!ops")
VICTOR = Actor(id="@victor:x", role=Role.VIEWER, where="matrix:!ops")
CAROL = Actor(id="@carol:x", role=Role.ADMIN, where="matrix:!ops")


async def test_a_face_without_the_port_says_one_line(session: CommandSession) -> None:
    for line in ("/watch", "/watches", "/every 10m /list", "/schedules", "/unschedule 1", "/unwatch sold"):
        outcome = await session.run(line)
        assert outcome.failure is not None and outcome.failure.kind == "forbidden", line
        assert "works in chat rooms only" in outcome.failure.message and "\n" not in outcome.failure.message


async def test_new_pets_are_announced_once_per_room_and_only_those_after_the_watch(rig: tuple) -> None:
    bot, posted, session = rig
    alice = session(ALICE)
    await alice.client.create_pet(name="Before", category_id=1, status="available")
    watched = (await alice.run("/watch available")).result
    assert isinstance(watched, WatchList) and watched.statuses == ("available",)
    assert "within 2 s" in watched.text
    other = session(Actor(id="@bob:x", role=Role.VIEWER, where="matrix:!adoptions"))
    assert isinstance((await other.run("/watch")).result, WatchList)

    new = await alice.client.create_pet(name="<b>After</b>", category_id=1, status="available")
    sold = await alice.client.create_pet(name="Gone", category_id=1, status="sold")
    assert await bot.watcher.poll() == 3  # !ops: the available one; !adoptions: both
    assert await bot.watcher.poll() == 0
    assert await bot.watcher.deliver() == 3
    assert await bot.watcher.deliver() == 0
    rooms = sorted((room, text) for room, text, _ in posted.posts)
    assert rooms == [
        ("!adoptions", f"New pet {new.pet.id}: <b>After</b> (category 1, available)"),
        ("!adoptions", f"New pet {sold.pet.id}: Gone (category 1, sold)"),
        ("!ops", f"New pet {new.pet.id}: <b>After</b> (category 1, available)"),
    ]
    assert all(key for _, _, key in posted.posts)
    gone = (await alice.run("/unwatch available")).result
    assert isinstance(gone, WatchList) and gone.statuses == () and gone.text.startswith("Stopped watching")


async def test_schedules_take_read_commands_only_and_are_dropped_by_their_creator_or_an_admin(rig: tuple) -> None:
    _, _, session = rig
    victor, alice = session(VICTOR), session(ALICE)
    for line, says in [
        ("/every 10m /add Rex --category 1", "/add writes"),
        ("/every 10m /every 1m /list", "/every is not a read of the service"),
        ("/every 10m /help", "/help is not a read of the service"),
        ("/every 10m /nosuch", "unknown command /nosuch"),
        ("/every 30s /list", "is not a schedule"),
    ]:
        outcome = await victor.run(line)
        assert outcome.failure is not None and says in outcome.failure.message, (line, outcome.failure)
    made = (await victor.run("/every weekday at 09:00 /list pending --limit 5")).result
    assert isinstance(made, ScheduleList) and made.timezone == "Europe/Berlin"
    row = made.rows[0]
    assert (row.id, row.rhythm, row.command, row.creator) == (
        1,
        "every weekday at 09:00",
        "/list pending --limit 5",
        "@victor:x",
    )
    assert row.next_run.endswith(("T09:00+01:00", "T09:00+02:00"))

    for other in (session(Actor(id="@vera:x", role=Role.VIEWER, where="matrix:!ops")), alice):
        refused = await other.run("/unschedule 1")
        assert (
            refused.failure is not None
            and "schedule 1 is @victor:x's: only they or an admin" in refused.failure.message
        )
    elsewhere = session(Actor(id="@victor:x", role=Role.VIEWER, where="matrix:!other"))
    assert "has no schedule 1" in ((await elsewhere.run("/unschedule 1")).failure or pytest.fail()).message
    admin_elsewhere = session(Actor(id="@carol:x", role=Role.ADMIN, where="matrix:!other"))
    assert "has no schedule 1" in ((await admin_elsewhere.run("/unschedule 1")).failure or pytest.fail()).message
    assert (await session(CAROL).run("/unschedule 1")).failure is None
    listed = (await alice.run("/schedules")).result
    assert isinstance(listed, ScheduleList) and listed.rows == ()
    mine = (await alice.run("/every 1d /orders")).result
    assert isinstance(mine, ScheduleList)
    assert (await alice.run(f"/unschedule {mine.rows[0].id}")).failure is None


async def test_schedules_and_watches_are_bounded_per_room_and_per_bot(
    database: Database, make_session: Callable[..., CommandSession]
) -> None:
    """A viewer's fifteen schedules in one room: ten made, five refused in one line naming the limit; the bot's
    limit counts every room; a dropped schedule makes room for one more. The same for watches."""
    first = make_session()
    store = WatchStore(database, service="sandbox", limits=Limits(per_room=2, total=3))
    bot = BotNotifications(
        watcher=Watcher(store=store, client=first.client, announce=Posted()),
        schedules=ScheduleStore(database, service="sandbox", limits=Limits(per_room=10, total=15)),
        interval=2,
        timezone="UTC",
    )

    def session(room: str) -> CommandSession:
        actor = Actor(id="@victor:x", role=Role.VIEWER, where=f"matrix:{room}")
        return make_session(actor=actor, notifications=bot.for_actor(actor))

    here, there = session("!a"), session("!b")
    outcomes = [await here.run("/every 1m /list pending") for _ in range(15)]
    assert [outcome.failure is None for outcome in outcomes] == [True] * 10 + [False] * 5
    for outcome in outcomes[10:]:
        assert outcome.failure is not None and outcome.failure.message == (
            "this room has 10 schedules, the most it may have ([bot] max_schedules_per_room): /unschedule one first"
        )
    assert [(await there.run("/every 1h /orders")).failure is None for _ in range(6)] == [True] * 5 + [False]
    refused = (await there.run("/every 1h /orders")).failure
    assert refused is not None and refused.message == (
        "this bot has 15 schedules in all its rooms, the most it may have ([bot] max_schedules)"
    )
    assert (await here.run("/unschedule 1")).failure is None
    assert (await there.run("/every 1h /orders")).failure is None, "a dropped schedule makes room for another"

    assert (await here.run("/watch")).failure is None and (await here.run("/watch sold")).failure is None
    again = (await here.run("/watch sold")).result
    assert isinstance(again, WatchList) and again.text.startswith("Already watching"), "not refused: not one more"
    full = (await here.run("/watch pending")).failure
    assert full is not None and full.message == (
        "this room has 2 watches, the most it may have ([bot] max_watches_per_room): /unwatch one first"
    )
    assert (await there.run("/watch")).failure is None
    full = (await there.run("/watch pending")).failure
    assert full is not None and "this bot has 3 watches in all its rooms" in full.message
    assert await store.of_room(room="!a") == ["", "sold"] and await store.of_room(room="!b") == [""]


async def test_a_missed_run_runs_once_when_less_than_an_hour_late_else_the_room_is_told(database: Database) -> None:
    store = ScheduleStore(database, service="sandbox")
    now = 1_800_000_000.0
    ran: list[tuple[str, str, str]] = []

    async def run_as(room: str, user: str, line: str) -> Reply:
        ran.append((room, user, line))
        return Reply(text="3 pets")

    posted = Posted()
    scheduler = Scheduler(store=store, run_as=run_as, announce=posted, zone=ZoneInfo("UTC"), clock=lambda: now)
    late = await store.add(room="!a", creator="@a:x", rhythm="every 10m", command="/list", next_run=now - 30 * 60)
    assert await scheduler.tick() == 1  # three runs missed, 30 minutes late: run once
    assert ran == [("!a", "@a:x", "/list")] and posted.posts[0][1] == "Schedule 1 (every 10m, by @a:x): /list\n3 pets"
    again = await store.get(late.id)
    assert again is not None and again.next_run == now + 10 * 60  # on its beat, after now
    assert await scheduler.tick() == 0

    await store.add(room="!b", creator="@b:x", rhythm="every day at 09:00", command="/orders", next_run=now - 7200)
    assert await scheduler.tick() == 0 and len(ran) == 1
    told = posted.posts[-1]
    assert told[0] == "!b" and "did not run at" in told[1] and "more than 60 minutes late is skipped" in told[1]
    assert (
        next_run_after(
            Schedule(
                id=9,
                room="!b",
                creator="@b:x",
                rhythm="every day at 09:00",
                command="/orders",
                next_run=0,
                created_at=0,
            ),
            now=now,
            zone=ZoneInfo("UTC"),
        )
        > now
    )


async def test_a_chat_room_session_offers_them_in_help_and_whoami(rig: tuple) -> None:
    _bot, _posted, session = rig
    alice = session(ALICE)
    listed = (await alice.run("/help")).result
    assert isinstance(listed, Help)
    assert {"/watch", "/unwatch", "/watches", "/every", "/schedules", "/unschedule"} <= {e.name for e in listed.entries}
    who = (await alice.run("/whoami")).result
    assert isinstance(who, WhoAmI) and "/every" in who.commands
