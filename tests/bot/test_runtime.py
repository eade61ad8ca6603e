"""The bot runtime itself (petstore_bot.runtime), on the real sandbox and a real SQLite state, with two in-test
platforms (a transport as small as the contract allows, like errbot's test backend): two transports answered by one
process, announcements routed to the one whose room it is, background work only while the lease is held, one
teardown however it ends."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from petstore_api.errors import ConfigError
from petstore_bot.chat import Handler, Reply
from petstore_bot.replicas import Leadership, Reach
from petstore_bot.runtime import BotRuntime, Intervals, Launch, configured_platforms
from petstore_bot.settings import BotSettings
from petstore_bot.testing import ChatRoom
from petstore_bot.transport import Transport, TransportError, Wiring
from petstore_state.lease import open_lease

from .service import SandboxService, sandbox_service

OPERATOR = "alpha:ann"
FAST = Intervals(
    approvals=0.05, notifier_step=0.05, finisher=0.05, sweep=0.05, replicas_poll=0.05,
    lease_ttl=1.5, lease_check=0.4, lease_retry=0.05,
)  # fmt: skip


@dataclass
class Fake:
    """A platform in the test: its rooms are ``<platform>:<name>``; it posts into a list."""

    platform: str
    fail: str | None = None
    reach: Reach | None = field(default_factory=Reach)
    posted: list[tuple[str, str, str | None]] = field(default_factory=list)
    handler: Handler | None = None
    running: asyncio.Event = field(default_factory=asyncio.Event)
    said: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def names(self) -> tuple[str, ...]:
        return (f"{self.platform}bot",)

    @property
    def can_post(self) -> bool:
        return self.running.is_set()

    def owns(self, room: str) -> bool:
        return room.startswith(f"{self.platform}:")

    async def run(self, handler: Handler, *, stop: asyncio.Event) -> None:
        if self.fail is not None:
            raise TransportError(self.fail)
        self.handler = handler
        if self.reach is not None:
            self.reach.set(up=True)
        self.running.set()
        try:
            await stop.wait()
        finally:
            if self.reach is not None:
                self.reach.set(up=False)

    async def announce(self, room: str, reply: Reply, /, *, key: str | None = None) -> bool:
        self.posted.append((room, reply.text, key))
        self.said.set()
        return True

    def room(self, name: str) -> ChatRoom:
        assert self.handler is not None
        return ChatRoom(self.handler, room=f"{self.platform}:{name}", platform=self.platform)


@dataclass
class World:
    runtime: BotRuntime
    fakes: dict[str, Fake]
    services: list[SandboxService]
    stop: asyncio.Event
    serving: asyncio.Task[None]


def _factory(fakes: dict[str, Fake], name: str) -> Callable[[Wiring], Transport]:
    def make(wiring: Wiring) -> Transport:
        return fakes[name]

    return make


def launch(tmp_path: Path, fakes: dict[str, Fake], services: list[SandboxService], **bot: object) -> Launch:
    def service() -> SandboxService:
        made = sandbox_service(tmp_path / "sandbox", audit=tmp_path / "audit.ndjson")
        services.append(made)
        return made

    settings = BotSettings.model_validate(
        {"rate_limit": "off", "confirm_writes": False, "watch_interval": 1, "roles": {"operators": [OPERATOR]}, **bot}
    )
    return Launch(
        bot=settings,
        platforms=tuple(fakes),
        service=service,
        state_dir=tmp_path / "state",
        config_where="test",
        intervals=FAST,
        factories={name: _factory(fakes, name) for name in fakes},
    )


@contextlib.asynccontextmanager
async def running(tmp_path: Path, *fakes: Fake, **bot: object) -> AsyncIterator[World]:
    by_name = {fake.platform: fake for fake in fakes}
    services: list[SandboxService] = []
    runtime = BotRuntime(launch(tmp_path, by_name, services, **bot))
    stop = asyncio.Event()
    serving = asyncio.create_task(runtime.serve(stop))
    world = World(runtime=runtime, fakes=by_name, services=services, stop=stop, serving=serving)
    try:
        await asyncio.wait_for(asyncio.gather(*(fake.running.wait() for fake in fakes)), timeout=30)
        yield world
    finally:
        stop.set()
        await asyncio.wait_for(serving, timeout=30)


class Said(logging.Handler):
    """The bot's log lines, and an event set once one of them contains ``text``."""

    def __init__(self, text: str) -> None:
        super().__init__(level=logging.INFO)
        self.text, self.seen = text, asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.text in record.getMessage():
            self.seen.set()


@contextlib.contextmanager
def logged(text: str) -> Iterator[Said]:
    said, logger = Said(text), logging.getLogger("petstore_bot")
    level = logger.level
    logger.addHandler(said)
    logger.setLevel(logging.INFO)
    try:
        yield said
    finally:
        logger.removeHandler(said)
        logger.setLevel(level)


async def test_two_platforms_in_one_process_each_answered_and_a_watch_posted_where_it_was_asked(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, Fake("alpha"), Fake("beta")) as world:
        alpha, beta = world.fakes["alpha"], world.fakes["beta"]
        assert await alpha.room("ops").text(OPERATOR, "!whoami") != ""
        assert "beta:bob" in await beta.room("ops").text("beta:bob", "!whoami")
        assert await alpha.room("ops").text(OPERATOR, "!watch") != ""
        [service] = world.services
        await service.client.create_pet(name="Routed", category_id=1)
        await asyncio.wait_for(alpha.said.wait(), timeout=30)
        [(room, text, key)] = alpha.posted
        assert room == "alpha:ops" and "Routed" in text and key is not None
        assert beta.posted == []
        assert [core.platform for core in world.runtime.cores.values()] == ["alpha", "beta"]
        assert world.runtime.cores["alpha"].roles is world.runtime.cores["beta"].roles  # one role book
    assert world.runtime.teardowns == 1 and service.closed == ["closed"]


async def test_a_request_asked_on_one_platform_is_posted_and_approved_in_the_approvals_room_of_another(
    tmp_path: Path,
) -> None:
    """With ``[bot] approvals_room`` set, a request asked in a chat room is bound to the approvals room (on the
    platform that owns it), posted there, and decided there only; its asker is told where it went."""
    bob, cid = "beta:bob", "beta:cid"
    extra = {"approvals": ["sandbox"], "approvals_room": "alpha:ops", "roles": {"operators": [OPERATOR, bob, cid]}}
    async with running(tmp_path, Fake("alpha"), Fake("beta"), **extra) as world:
        alpha, beta = world.fakes["alpha"], world.fakes["beta"]
        asked = await beta.room("dev").text(bob, "!add Crossed --category 1")
        code = re.search(r"!approve ([A-Z0-9]+)", asked)
        assert code is not None and "It is posted in alpha:alpha:ops" in asked, asked
        await asyncio.wait_for(alpha.said.wait(), timeout=30)
        [(room, text, key)] = alpha.posted
        assert room == "alpha:ops" and code[1] in text and "asked in beta:beta:dev" in text and key is not None
        refused = await beta.room("dev").text(cid, f"!approve {code[1]}")
        assert "decided only in the room where it was asked for (or posted)" in refused
        approved = await alpha.room("ops").text(OPERATOR, f"!approve {code[1]}")
        assert "Crossed" in approved and beta.posted == []


async def test_the_runtime_runs_its_background_work_only_as_work_of_the_lease_holder(tmp_path: Path) -> None:
    """Every piece of its background work is added to the leadership, and it stops when a transport's reach goes
    down (the lease given up), starting again when it is back."""
    with logged("watches and schedules stops") as stopped, logged("watches and schedules starts") as started:
        async with running(tmp_path, Fake("alpha"), Fake("beta")) as world:
            leadership = world.runtime.leadership
            assert leadership is not None
            assert set(leadership.work) == {
                "pruning of old claims",
                "watches and schedules",
                "finishing the writes left taken on alpha",
                "finishing the writes left taken on beta",
            }
            await asyncio.wait_for(started.seen.wait(), timeout=30)
            reach = world.fakes["beta"].reach
            assert reach is not None and leadership.lease.held
            started.seen.clear()
            reach.set(up=False)  # beta cannot reach its server: this process gives the lease up
            await asyncio.wait_for(stopped.seen.wait(), timeout=30)
            assert not leadership.lease.held
            reach.set(up=True)
            await asyncio.wait_for(started.seen.wait(), timeout=30)


async def test_leadership_cancels_its_work_when_the_lease_is_lost(tmp_path: Path) -> None:
    lease = open_lease(None, state_dir=tmp_path, name="bot", ttl=1.5, check=0.4, retry=0.05)
    leadership, reach, stop = Leadership(lease), Reach(), asyncio.Event()
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def work() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    leadership.add("work", work)
    holding = asyncio.create_task(leadership.run(stop, reach=[reach]))
    try:
        reach.set(up=True)
        await asyncio.wait_for(started.wait(), timeout=30)
        reach.set(up=False)
        await asyncio.wait_for(cancelled.wait(), timeout=30)
        assert not lease.held
    finally:
        stop.set()
        await holding
        lease.close()


async def test_a_transport_that_fails_for_good_stops_the_others_and_the_teardown_runs_once(tmp_path: Path) -> None:
    fakes = {"alpha": Fake("alpha"), "beta": Fake("beta", fail="the server refused the password")}
    services: list[SandboxService] = []
    runtime = BotRuntime(launch(tmp_path, fakes, services))
    with pytest.raises(TransportError, match="^beta: the server refused the password$"):
        await asyncio.wait_for(runtime.serve(asyncio.Event()), timeout=30)
    assert runtime.teardowns == 1 and [s.closed for s in services] == [["closed"]]
    assert fakes["alpha"].running.is_set()  # it ran, and was stopped with the rest


async def test_a_factory_that_refuses_its_settings_closes_what_was_opened_once(tmp_path: Path) -> None:
    services: list[SandboxService] = []

    def refuse(wiring: Wiring) -> Transport:
        raise ConfigError("[bot.alpha] server is not set")

    base = launch(tmp_path, {"alpha": Fake("alpha")}, services)
    runtime = BotRuntime(replace(base, factories={"alpha": refuse}))
    with pytest.raises(ConfigError, match="server is not set"):
        await runtime.serve(asyncio.Event())
    assert [s.closed for s in services] == [["closed"]] and runtime.teardowns == 1


def test_without_a_platform_named_the_bot_runs_every_section_the_config_sets() -> None:
    assert configured_platforms(BotSettings()) == ()
    both = BotSettings.model_validate({"matrix": {"homeserver": "https://m.example.org"}, "slack": {}})
    assert configured_platforms(both) == ("matrix", "slack")
    with pytest.raises(ConfigError, match="no chat platform is configured"):
        BotRuntime(Launch(bot=BotSettings(), platforms=(), service=None, state_dir=Path(), config_where="x"))  # type: ignore[arg-type]


def test_lease_ttl_sets_the_lease_and_keeps_the_production_intervals_at_six_seconds(tmp_path: Path) -> None:
    assert Intervals.for_lease(BotSettings().lease_ttl) == Intervals()
    short = Intervals.for_lease(BotSettings(lease_ttl=3).lease_ttl)
    assert (short.lease_ttl, short.lease_check, short.lease_retry) == (3, 1, 0.5)
    least = Intervals.for_lease(1.5)  # the least [bot] lease_ttl allows still makes a lease open_lease accepts
    open_lease(
        None, state_dir=tmp_path, name="bot", ttl=least.lease_ttl, check=least.lease_check, retry=least.lease_retry
    ).close()
    for wrong in (1.4, 301):
        with pytest.raises(ValueError, match="lease_ttl"):
            BotSettings(lease_ttl=wrong)
