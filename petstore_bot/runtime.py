"""The bot's runtime: one object, built from the settings, that runs a bot on every chat platform it is configured
for, in one process, on one state store, one audit log and one lease.

:class:`BotRuntime` opens, in this order (each thing opened is closed by the one teardown, in reverse):

- the role book (:func:`~petstore_bot.rules.role_book`), the state database, the lease (named after the bot's
  accounts) and the replicas' claims in that database;
- the service (the composition root's :attr:`Launch.service`), the held writes, the watches and schedules;
- per platform, a :class:`~petstore_bot.core.BotCore` (its platform and prefix; the names its transport gives
  through ``Wiring.addressing``), sharing the roles, the state, the rate windows and the notifications, then its
  transport from the registry's factory (:func:`~petstore_bot.transport.factory_of`) given a
  :class:`~petstore_bot.transport.Wiring` with that core; a factory refuses a missing setting in one line;
- the background work, in one way only: work of the lease holder (:meth:`~petstore_bot.replicas.Leadership.add`,
  started when the lease is taken and cancelled when it is lost): the notifier, a finisher per platform, the poster
  of requests for approval, the pruning of old claims.

It then serves every transport, the lease (held only while every transport with a :class:`~petstore_bot.replicas
.Reach` reaches its server), the expiry sweep and the health endpoint, until SIGTERM or SIGINT or until a transport
ends (whatever a transport's ``run`` raises stops them all: :class:`~petstore_bot.transport.TransportError`, said
as ``petstore: <platform>: <message>``); then it tears down once. An announcement (a watch, a schedule, a request
for approval, a finished write) goes to the transport whose :meth:`~petstore_bot.transport.Transport.owns` says the
room is its.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import signal
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bot_commands.errors import EXIT_FAILED, EXIT_OK
from bot_commands.policy import where_in
from petstore_api.errors import ConfigError
from petstore_state import Database, StateError, open_database
from petstore_state.claims import Claims
from petstore_state.lease import Lease, open_lease

from .addressing import Address
from .assembly import BotState, Service, build_core, open_state
from .background import bot_health, bot_notifications, finisher, lease_work, notifier
from .chat import Reply
from .core import BotCore
from .logs import configure_bot_logging
from .pending import SWEEP_INTERVAL, sweep
from .replicas import POLL, Leadership, Replicas
from .roles import RoleBook
from .rules import accept_invite, role_book
from .settings import BotSettings
from .transport import FACTORIES, Factory, Transport, TransportError, Wiring, factory_of

if TYPE_CHECKING:  # pragma: no cover
    from .health import HealthServer

__all__ = ["BotRuntime", "Intervals", "Launch", "account_of", "configured_platforms"]

log = logging.getLogger("petstore_bot")


@dataclass(frozen=True, slots=True, kw_only=True)
class Intervals:
    """How often the runtime's loops look, in seconds (tests shorten them)."""

    #: The approvals poster's look for requests not posted yet.
    approvals: float = 1.0
    #: The notifier's step (it polls the watches every ``[bot] watch_interval``, posts and runs schedules each step).
    notifier_step: float = 1.0
    #: The finisher's retry when the store fails, and the expiry sweep's look for expired held writes.
    finisher: float = SWEEP_INTERVAL
    sweep: float = SWEEP_INTERVAL
    #: A standby replica's look at the store for a message it holds.
    replicas_poll: float = POLL
    #: The lease: how long it outlives its holder's last renewal, how often the holder renews it, how often the
    #: others try to take it (:func:`petstore_state.lease.open_lease`).
    lease_ttl: float = 6.0
    lease_check: float = 2.0
    lease_retry: float = 1.0

    @classmethod
    def for_lease(cls, ttl: float) -> Intervals:
        """The production intervals with a lease of ``ttl`` seconds (``[bot] lease_ttl``): renewed every third of it,
        tried for by the others every sixth of it, at most every second (6 s: every 2 s and every second)."""
        return cls(lease_ttl=ttl, lease_check=ttl / 3, lease_retry=min(1.0, ttl / 6))


@dataclass(frozen=True, kw_only=True)
class Launch:
    """What the composition root gives the runtime: the ``[bot]`` settings, the platforms to run, and the service."""

    bot: BotSettings
    #: The platforms to run, by their registry names (:func:`configured_platforms`: every one the config names).
    platforms: Sequence[str]
    #: Opens the service (its client, audit log and sessions), once the platforms' settings checked out.
    service: Callable[[], Service]
    #: Where the state store is (SQLite, when ``[bot] state`` is unset), the approval key, the platforms' files.
    state_dir: Path
    #: Where the settings came from, for one-line errors that say where to set a missing value.
    config_where: str
    #: Where a platform called over HTTP listens (``--host``, ``--port``), and Slack over Socket Mode instead.
    listen: tuple[str, int] = ("127.0.0.1", 3000)
    socket_mode: bool = False
    #: ``--metrics-port``: /healthz and /metrics on 127.0.0.1 (None: off).
    metrics_port: int | None = None
    verbose: int = 0
    intervals: Intervals = Intervals()
    #: The schedules' clock, in seconds since the epoch (tests move it past a schedule's next run).
    clock: Callable[[], float] = time.time
    #: The factories by platform (None: the registry's, :data:`~petstore_bot.transport.FACTORIES`).
    factories: Mapping[str, Factory] | None = None
    #: Called once everything is open (the platforms' SDKs imported), before serving: the program's end of start-up
    #: (:func:`petstore_cli.startup.started`).
    started: Callable[[], None] | None = None


def configured_platforms(bot: BotSettings) -> tuple[str, ...]:
    """The platforms whose ``[bot.<platform>]`` section the config (or the environment) sets, in registry order."""
    return tuple(name for name in FACTORIES if name in bot.model_fields_set)


def account_of(bot: BotSettings, platform: str) -> str:
    """Who the bot is on ``platform``: its section's ``account`` when it says (Matrix: homeserver and user id),
    else the platform's name. Names the lease (and the claims) replicas of one bot share."""
    account = getattr(getattr(bot, platform, None), "account", None)
    return account if isinstance(account, str) and account else f"{platform} bot"


class BotRuntime:
    """A bot process on every platform of ``launch`` (see the module docstring); :meth:`run` it."""

    def __init__(self, launch: Launch) -> None:
        if not launch.platforms:
            raise ConfigError("no chat platform is configured: add a [bot.<platform>] section, e.g. [bot.matrix]")
        self.launch = launch
        self.roles: RoleBook = role_book(launch.bot)
        self.transports: list[Transport] = []
        self.cores: dict[str, BotCore] = {}
        self.leadership: Leadership | None = None
        self.state: BotState | None = None
        #: ``[bot] approvals_room`` as ``platform:room``, once the transport that owns it is known.
        self._approvals_room: str | None = None
        self.health: HealthServer | None = None
        #: How many teardowns ran (one per :meth:`serve`).
        self.teardowns = 0

    def run(self) -> int:
        """Serve until SIGTERM or SIGINT (exit 0); a transport that fails for good is said in one line (exit 1).
        ConfigError, in one line, for a setting that is missing or wrong."""
        try:
            asyncio.run(self.serve(process=True))
        except TransportError as exc:
            print(f"petstore: {exc}", file=sys.stderr)
            return EXIT_FAILED
        return EXIT_OK

    async def serve(self, stop: asyncio.Event | None = None, *, process: bool = False) -> None:
        """Open everything, serve until ``stop`` is set or a transport ends, then tear down once. ``process``: this
        is the process's bot: SIGTERM and SIGINT stop it too, and its log is set up (once the settings checked
        out). Raises TransportError (``platform: message``) when a transport failed for good."""
        stop = stop or asyncio.Event()
        async with contextlib.AsyncExitStack() as opened:
            opened.callback(self._torn_down)
            await self._open(opened, process=process)
            if self.launch.started is not None:
                self.launch.started()
            opened.callback(log.info, "petstore bot stopped")
            if process:
                _on_signals(stop, opened)
            await self._serve(stop)

    def _torn_down(self) -> None:
        self.teardowns += 1

    async def _open(self, opened: contextlib.AsyncExitStack, *, process: bool) -> None:
        launch, bot = self.launch, self.launch.bot
        database = _state_database(bot, launch.state_dir)
        opened.callback(database.close)
        name = " + ".join(account_of(bot, platform) for platform in launch.platforms)
        lease = self._lease(name)
        opened.callback(lease.close)
        replicas = Replicas(lease=lease, claims=_claims(database, name), poll=launch.intervals.replicas_poll)
        self.leadership = Leadership(lease)
        self.leadership.add("pruning of old claims", replicas.prune)
        service = launch.service()
        opened.push_async_callback(service.aclose)
        self.state = open_state(
            bot, state_dir=launch.state_dir, audit=service.audit, database=database, approvals_room=self.approvals_room
        )
        self._build(service, self.state, lease, replicas)
        if process:
            configure_bot_logging(verbose=launch.verbose)
        _log_start(service, self.transports, self.state)

    def _lease(self, name: str) -> Lease:
        intervals = self.launch.intervals
        try:
            return open_lease(
                self.launch.bot.state_url(),
                state_dir=self.launch.state_dir,
                name=name,
                ttl=intervals.lease_ttl,
                check=intervals.lease_check,
                retry=intervals.lease_retry,
            )
        except StateError as exc:
            raise ConfigError(str(exc)) from None

    def _transport(self, platform: str, core: BotCore, replicas: Replicas) -> Transport:
        """The transport of ``platform`` on ``core``, made by its factory (ConfigError for a missing setting)."""
        launch = self.launch
        factory = launch.factories[platform] if launch.factories is not None else factory_of(platform)
        made = factory(
            Wiring(
                bot=launch.bot,
                state_dir=launch.state_dir,
                config_where=launch.config_where,
                addressing=functools.partial(self._addressing, platform),
                accept_invite=functools.partial(accept_invite, self.roles),
                replicas=replicas,
                roles=self.roles,
                core=core,
                listen=launch.listen,
                socket_mode=launch.socket_mode,
            )
        )
        if made.names and not core.addressing.names:
            self._addressing(platform, made.names)
        return made

    def _addressing(self, platform: str, names: Sequence[str]) -> Address:
        """The rule for commands on ``platform``: its core's, which now knows ``names`` (what people call the bot
        there, as the transport says)."""
        core = self.cores[platform]
        core.addressing = dataclasses.replace(core.addressing, names=tuple(names))

        def address(text: str, *, direct: bool = False, also: Iterable[str] = ()) -> str | None:
            return core.addressing.line(text, direct=direct, also=also)

        return address

    def _build(self, service: Service, state: BotState, lease: Lease, replicas: Replicas) -> None:
        """A core and a transport per platform, and the background work on them as work of the lease holder."""
        bot, intervals, leadership = self.launch.bot, self.launch.intervals, self.leadership
        assert leadership is not None
        notifications = bot_notifications(
            service, bot, database=state.database, announce=self.announce, clock=self.launch.clock, lease=lease
        )
        self.health = bot_health(state, leadership, port=self.launch.metrics_port)
        for platform in self.launch.platforms:
            self.cores[platform] = build_core(
                service,
                bot,
                platform=platform,
                prefix=bot.prefix_of(platform),
                roles=self.roles,
                state=state,
                notifications=notifications,
                observe=self.health.metrics.observe if self.health else None,
            )
            self.transports.append(self._transport(platform, self.cores[platform], replicas))
        work = notifier(
            notifications, run_as=self._run_as, announce=self.announce, lease=lease, step=intervals.notifier_step
        )
        leadership.add("watches and schedules", lease_work(work.run))
        for platform, core in self.cores.items():
            taken = finisher(
                state,
                platform=platform,
                resume=core.resume,
                announce=self.announce,
                lease=lease,
                interval=intervals.finisher,
            )
            leadership.add(f"finishing the writes left taken on {platform}", lease_work(taken.run))
        self._add_poster(state, lease)

    def _add_poster(self, state: BotState, lease: Lease) -> None:
        """The poster of requests for approval in ``[bot] approvals_room`` (approvals and the room set), posting
        through the transport that owns the room."""
        bot = self.launch.bot
        room = bot.approvals_room
        if not bot.approvals or not room:
            return
        owner = self.owner(room)
        if owner is None:
            log.warning("[bot] approvals_room %s is no room of %s: requests are not posted", room, _names(self))
            return
        from .approvals_room import ApprovalPoster

        self._approvals_room = where_in(owner.platform, room)

        poster = ApprovalPoster(
            state.pending.store,
            room=room,
            announce=owner.announce,
            seal=state.pending.seal,
            platform=owner.platform,
            prefix=self.cores[owner.platform].prefix,
            interval=self.launch.intervals.approvals,
            lease=lease,
        )
        assert self.leadership is not None
        self.leadership.add("posting requests for approval", lease_work(poster.run))

    def approvals_room(self) -> str | None:
        """Where requests for approval asked in chat are bound and posted (``platform:room``), when ``[bot]
        approvals_room`` is set and a transport of this bot owns it; None: each in the room where it was asked."""
        return self._approvals_room

    def owner(self, room: str) -> Transport | None:
        """The transport whose room ``room`` is (a process with one transport: that one)."""
        for transport in self.transports:
            if transport.owns(room):
                return transport
        return self.transports[0] if len(self.transports) == 1 else None

    async def announce(self, room: str, reply: Reply, /, *, key: str | None = None) -> bool:
        """Post ``reply`` in ``room`` through the transport that owns it; False when none does or it cannot now."""
        owner = self.owner(room)
        if owner is None:
            log.warning("no transport of this bot has the room %s: nothing posted there", room)
            return False
        return await owner.announce(room, reply, key=key)

    async def _run_as(self, room: str, user: str, line: str) -> Reply:
        """A schedule's run, by the core of the platform whose room it is."""
        owner = self.owner(room)
        core = self.cores[owner.platform] if owner is not None else next(iter(self.cores.values()))
        return await core.reply_as(room=room, user=user, line=line)

    async def _serve(self, stop: asyncio.Event) -> None:
        """Every transport, the lease and its work, the sweep and the health endpoint, until ``stop`` or until a
        transport ends; a transport's failure (TransportError) raised once everything stopped."""
        assert self.state is not None and self.leadership is not None
        reaches = [transport.reach for transport in self.transports if transport.reach is not None]
        beside = [
            asyncio.create_task(self.leadership.run(stop, reach=reaches)),
            asyncio.create_task(sweep(self.state.pending, stop=stop, interval=self.launch.intervals.sweep)),
        ]
        if self.health is not None:
            beside.append(asyncio.create_task(self.health.run(stop)))
        running = {
            asyncio.create_task(transport.run(core.handle, stop=stop)): transport
            for core, transport in zip(self.cores.values(), self.transports, strict=True)
        }
        try:
            await asyncio.wait([*running, asyncio.create_task(stop.wait())], return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.set()
            await asyncio.gather(*running, *beside, return_exceptions=True)
        _raise_failure(running)


def _raise_failure(running: Mapping[asyncio.Task[None], Transport]) -> None:
    """The first transport's failure for good (whatever its ``run`` raised, by the contract a one-line reason), as
    ``platform: message``; the traceback in the log with ``-v``."""
    for task, transport in running.items():
        failure = None if task.cancelled() else task.exception()
        if isinstance(failure, Exception):
            log.debug("%s ended", transport.platform, exc_info=failure)
            raise TransportError(f"{transport.platform}: {failure}") from failure
        if failure is not None:
            raise failure


def _on_signals(stop: asyncio.Event, opened: contextlib.AsyncExitStack) -> None:
    """SIGTERM and SIGINT set ``stop`` until the teardown (which puts the handlers back)."""
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
        opened.callback(loop.remove_signal_handler, signum)


def _state_database(bot: BotSettings, state_dir: Path) -> Database:
    """The ``[bot] state`` database (SQLite in ``state_dir`` when unset); ConfigError in one line."""
    try:
        return open_database(bot.state_url(), state_dir=state_dir)
    except StateError as exc:
        raise ConfigError(str(exc)) from None


def _claims(database: Database, name: str) -> Claims:
    try:
        return Claims(database, scope=name)
    except StateError as exc:
        raise ConfigError(str(exc)) from None


def _names(runtime: BotRuntime) -> str:
    return " or ".join(transport.platform for transport in runtime.transports)


def _log_start(service: Service, transports: Sequence[Transport], state: BotState) -> None:
    log.info(
        "petstore bot on %s; service %s %s; audit %s; state %s",
        ", ".join(repr(transport) for transport in transports),  # each says where it is (never a secret)
        service.env.env,
        service.env.base_url,
        service.audit.path if service.audit else "-",
        state.database.where,
    )
