"""``petstore bot matrix|slack``: the command layer in team chat. Wires settings -> composition -> BotCore -> face.

The bot's sessions share one client; its policy is the face's own (read-only, production) plus what chat needs:
deferred confirmation (``!confirm CODE``) and approval (``!approve CODE``) held in the state store (``[bot] state``),
nothing that touches local files. The audit log is always on.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import SecretStr

from bot_commands.audit import AuditLog
from bot_commands.commands import CHAT_SLEEP_MAX
from bot_commands.errors import EXIT_FAILED, EXIT_OK, Forbidden
from bot_commands.policy import Actor, Policy, Role
from bot_commands.session import CommandSession
from petstore_api.errors import ConfigError
from petstore_bot.chat import Reply
from petstore_bot.core import BotCore
from petstore_bot.notifier import BotNotifications
from petstore_bot.pending import StoredPending, TakenFinisher, room_approvers, sweep
from petstore_bot.ratelimit import RateLimiter, StoredRateLimiter
from petstore_bot.roles import Grants, RoleBook, RoomRules
from petstore_bot.seal import Seal, load_key
from petstore_bot.settings import BotSettings
from petstore_bot.watcher import Announce
from petstore_cli.settings.model import Settings
from petstore_cli.settings.paths import default_config_path, default_data_dir
from petstore_state import Database, StateError, open_database
from petstore_state.conversations import ConversationStore
from petstore_state.lease import Lease
from petstore_state.pending import PendingStore

from .bot_background import Background, all_of, approval_poster, beside, bot_notifications, connected, notifier
from .bot_replicas import Replication, open_replication
from .compose import Composition, compose

if TYPE_CHECKING:
    import uvicorn

    from bot_commands.outcome import Outcome
    from petstore_bot.health import HealthServer
    from petstore_bot.slack import SlackFace

    from .bot_replicas import Replication

log = logging.getLogger("petstore_bot")


#: Commands remembered per chat session (chat has no /history; enough to look into a conversation, bounded for a
#: bot that runs for months with thousands of people).
CHAT_HISTORY = 100
Run = Callable[[asyncio.Event], Awaitable[None]]
"""A transport's run until the event is set (SIGTERM, Ctrl-C)."""


def bot_policy(base: Policy, bot: BotSettings, *, env: str = "") -> Policy:
    """The rules in chat: writes confirmed later by code (unless turned off, never on production), approved by a
    second person on the environments ``[bot] approvals`` names, no terminal."""
    return replace(
        base, deferred=True, terminal=False, confirm_writes=bot.confirm_writes, approval=env in bot.approvals
    )


@dataclass
class BotState:
    """The state store a bot runs on, and its held writes (confirmations and approvals) in it."""

    database: Database
    pending: StoredPending
    conversations: ConversationStore

    def close(self) -> None:
        self.database.close()


def open_state(bot: BotSettings, *, state_dir: Path, audit: AuditLog | None) -> BotState:
    """The ``[bot] state`` database (SQLite in ``state_dir`` when unset); ConfigError, in one line, when it
    cannot be opened."""
    key = bot.approval_key.get_secret_value() if bot.approval_key else None
    try:
        seal = Seal(load_key(setting=key, state_dir=state_dir))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"[bot] approval_key: {exc}") from None
    try:
        database = open_database(bot.state_url(), state_dir=state_dir)
        store, conversations = PendingStore(database), ConversationStore(database)
    except StateError as exc:
        raise ConfigError(str(exc)) from None
    approvers = room_approvers({room: grants.approvers for room, grants in bot.rooms.items()})
    pending = StoredPending(store, audit=audit, seal=seal, approvers=approvers)
    return BotState(database=database, pending=pending, conversations=conversations)


def finisher(
    state: BotState,
    core: BotCore,
    *,
    announce: Announce | None,
    should_run: Callable[[], Awaitable[bool]],
    lease: Lease | None,
) -> TakenFinisher:
    """Finishes, once ``should_run`` says yes (this replica leads), the writes taken before this process started and
    never finished, each claimed under ``lease``; their rooms are told where the bot can post unasked
    (``announce``)."""

    async def untold(room: str, reply: Reply, /, *, key: str | None = None) -> bool:
        return False

    return TakenFinisher(
        state.pending.store,
        platform=core.platform,
        resume=core.resume,
        announce=announce or untold,
        started=time.time(),
        should_run=should_run,
        lease=lease,
    )


def audit_path(settings: Settings, *, flag: Path | None = None) -> Path:
    """``--audit-log``, else ``[bot] audit_log``, else ``[audit] path``, else audit.ndjson in the platform data dir."""
    chosen = flag or settings.bot.audit_log or settings.audit.path or default_data_dir() / "audit.ndjson"
    return chosen.expanduser()


def compose_bot(settings: Settings, *, sandbox_reset: bool = False, audit_flag: Path | None = None) -> Composition:
    """The composition a bot runs on: the face's own, with the audit log at :func:`audit_path`."""
    audit = settings.audit.model_copy(update={"path": audit_path(settings, flag=audit_flag)})
    return compose(settings.model_copy(update={"audit": audit}), sandbox_reset=sandbox_reset)


def role_book(bot: BotSettings) -> RoleBook:
    """The roles of ``[bot.roles]`` and ``[bot.rooms."<room id>"]``; a room's table that grants no role (only its
    ``approvers``, say) leaves the global roles in force there."""
    rooms = {
        room: RoomRules(
            grants=Grants.of(admins=grants.admins, operators=grants.operators, viewers=grants.viewers),
            default=Role(grants.default_role) if grants.default_role else None,
            power_levels=grants.power_levels,
        )
        for room, grants in bot.rooms.items()
        if grants.admins or grants.operators or grants.viewers or grants.default_role or grants.power_levels
    }
    roles = bot.roles
    return RoleBook.of(
        admins=roles.admins, operators=roles.operators, viewers=roles.viewers, default=bot.default_role, rooms=rooms
    )


def build_core(
    composition: Composition,
    bot: BotSettings,
    *,
    platform: str,
    prefix: str | None = None,
    names: Sequence[str] = (),
    state: BotState | None = None,
    notifications: BotNotifications | None = None,
    observe: Callable[[Outcome], None] | None = None,
) -> BotCore:
    """The bot core on ``composition``'s client, with the ``[bot]`` settings (``prefix`` overrides bot.prefix:
    a slash command's, so no bare commands in direct messages); ``names``: what people call the bot; ``state``:
    where held writes, rate windows and ``$last`` are kept (None: in memory, for tests of the core alone);
    ``notifications``: the watches and schedules its sessions reach (!watch, !every), when it can post unasked;
    ``observe``: told every outcome (the process's metrics)."""
    roles = role_book(bot)
    pending = state.pending.governed_by(roles, people=bot.who) if state is not None else None
    policy = bot_policy(composition.policy, bot, env=composition.env.env)

    def session(actor: Actor) -> CommandSession:
        made = composition.session(
            actor=actor,
            policy=policy,
            confirm_ttl=bot.confirm_ttl,
            max_history=CHAT_HISTORY,
            pending=pending,
            approval_ttl=bot.approval_ttl,
            sleep=_chat_sleep,
            notifications=notifications.for_actor(actor) if notifications is not None else None,
        )
        return made

    return BotCore(
        sessions=session,
        roles=roles,
        limiter=RateLimiter(bot.rate) if state is None else StoredRateLimiter(bot.rate, store=state.conversations),
        conversations=state.conversations if state is not None else None,
        platform=platform,
        prefix=bot.prefix if prefix is None else prefix,
        commands=composition.registry.names(),
        names=names,
        bare_in_direct=prefix is None,
        observe=observe,
    )


async def _chat_sleep(seconds: float) -> None:
    """``!sleep`` for demos, refused beyond CHAT_SLEEP_MAX: anyone in a room (even role none) could stall the bot."""
    if seconds > CHAT_SLEEP_MAX:
        raise Forbidden(f"/sleep in chat is at most {CHAT_SLEEP_MAX:g} s: a pause holds your next commands")
    await asyncio.sleep(seconds)


def accept_invite(core: BotCore, inviter: str, direct: bool, room: str) -> bool:
    """Whom the bot joins: a direct chat with anyone who has a role (viewers too: they may read there), a room
    from an operator or admin only (a room is a team's, and the bot answers everyone in it); in a room with grants
    of its own, by those (:meth:`~petstore_bot.roles.RoleBook.invite_role`)."""
    role = core.roles.invite_role(inviter, room)
    return role in (Role.OPERATOR, Role.ADMIN) or (direct and role is not Role.NONE)


def matrix_names(user_id: str) -> tuple[str, ...]:
    """What people call a Matrix bot when they name it: its localpart (``petbot``) and its full user id."""
    return (user_id.removeprefix("@").split(":", 1)[0], user_id)


def _not_set(table: str, name: str, where: str) -> ConfigError:
    variable = f"PETSTORE_{table.upper().replace('.', '__')}__{name.upper()}"
    return ConfigError(f"[{table}] {name} is not set: set it in {where} or {variable}")


def matrix_main(
    settings: Settings,
    *,
    config_file: Path | None,
    sandbox_reset: bool = False,
    audit_flag: Path | None = None,
    verbose: int = 0,
    metrics_port: int | None = None,
) -> int:
    """Entry point of ``petstore bot matrix``; returns the exit code (0 after SIGTERM or Ctrl-C).

    ``audit_flag`` is ``--audit-log`` when given: a flag wins over ``[bot] audit_log`` as flags win everywhere.
    """
    from petstore_bot.matrix import MatrixError, MatrixTransport
    from petstore_bot.matrix_crypto import Crypto

    matrix = settings.bot.matrix
    where = str(config_file or default_config_path())
    for name in ("homeserver", "user_id"):
        if not getattr(matrix, name):
            raise _not_set("bot.matrix", name, where)
    if (matrix.password is None) == (matrix.access_token is None):
        raise ConfigError(
            f"[bot.matrix] needs one of password or access_token: set it in {where} or "
            "PETSTORE_BOT__MATRIX__PASSWORD / PETSTORE_BOT__MATRIX__ACCESS_TOKEN"
        )
    configure_bot_logging(verbose=verbose)
    composition = compose_bot(settings, sandbox_reset=sandbox_reset, audit_flag=audit_flag)
    assert matrix.homeserver is not None and matrix.user_id is not None
    state_dir = (matrix.state_dir or default_data_dir() / "bot").expanduser()
    state = open_state(settings.bot, state_dir=state_dir, audit=composition.audit)
    account = f"matrix {matrix.homeserver} {matrix.user_id}"
    replication = open_replication(settings.bot.state_url(), state_dir=state_dir, name=account, database=state.database)

    async def announce(room: str, reply: Reply, /, *, key: str | None = None) -> bool:
        return await transport.announce(room, reply, key=key)

    lease = replication.leadership.lease
    notifications = bot_notifications(
        composition, settings.bot, database=state.database, announce=announce, lease=lease
    )
    health = bot_health(state, replication, port=metrics_port)
    core = build_core(
        composition,
        settings.bot,
        platform="matrix",
        names=matrix_names(matrix.user_id),
        state=state,
        notifications=notifications,
        observe=health.metrics.observe if health else None,
    )
    transport = MatrixTransport(
        homeserver=matrix.homeserver,
        user_id=matrix.user_id,
        password=matrix.password.get_secret_value() if matrix.password else None,
        access_token=matrix.access_token.get_secret_value() if matrix.access_token else None,
        rooms=matrix.rooms,
        state_dir=state_dir,
        accept_invite=functools.partial(accept_invite, core),
        address=core.addressing.line,
        reply_style=settings.bot.reply_style,
        crypto=Crypto(key_sharing=matrix.key_sharing, verified_devices=matrix.verified_devices),
        max_backlog_age=settings.bot.max_backlog_age,
        power_levels=core.roles.levels,
        replicas=replication.replicas,
    )
    log.info(
        "petstore bot on %s as %s; service %s %s; audit %s; state %s",
        matrix.homeserver,
        matrix.user_id,
        composition.env.env,
        composition.env.base_url,
        composition.audit.path if composition.audit else "-",
        state.database.where,
    )
    from petstore_bot.approvals_room import matrix_announce

    poster = approval_poster(
        settings.bot,
        store=state.pending.store,
        announce=matrix_announce(transport, prefix=settings.bot.prefix),
        seal=state.pending.seal,
        platform="matrix",
    )
    try:
        gate = all_of(connected(transport), replication.leadership.leading)
        background: list[Background] = [
            notifier(notifications, core, announce=announce, should_run=gate, lease=lease),
            finisher(state, core, announce=announce, should_run=gate, lease=lease),
        ]
        if poster is not None:
            background.append(poster.gated(gate, lease=lease))
        if health is not None:
            background.append(health)
        run = beside(background, lambda stop: transport.run(core.handle, stop=stop))
        asyncio.run(_serve(lambda stop: replication.around(run, stop, reach=transport.reach), composition, state))
    except MatrixError as exc:
        print(f"petstore: matrix: {exc}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def bot_health(state: BotState, replication: Replication, *, port: int | None) -> HealthServer | None:
    """The process's ``/healthz`` and ``/metrics`` on 127.0.0.1:``port`` (``--metrics-port``), beside the transport;
    None when not asked for (off by default)."""
    if port is None:
        return None
    from collections import Counter

    from petstore_bot.health import BotMetrics, HealthServer

    async def held() -> dict[str, int]:
        waiting = await state.pending.store.recent(states=("waiting",), limit=10_000)
        return dict(Counter(write.kind for write in waiting))

    return HealthServer(BotMetrics(leading=replication.leadership.leading, held=held), port=port)


async def _serve(run: Run, composition: Composition, state: BotState) -> None:
    """``run`` a transport until SIGTERM or SIGINT (it is given the event they set), closing expired confirmations
    meanwhile; then close the client, the state and the audit log."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    sweeper = asyncio.create_task(sweep(state.pending, stop=stop))
    try:
        await run(stop)
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
        stop.set()
        await sweeper
        await composition.aclose()
        state.close()
        log.info("petstore bot stopped")


#: The bot's one format on stderr, for its own lines and those of the libraries under it.
BOT_LOG_FORMAT = "%(asctime)s %(name)s %(levelname)s %(message)s"


def configure_bot_logging(*, verbose: int) -> None:
    """Every line on stderr in :data:`BOT_LOG_FORMAT`: what the bot does, one line each (never a secret: the
    transport redacts them; every command, reads too, with ``-v``), and the warnings and errors of the libraries
    under it (matrix-nio's ``Error validating response``, slack_sdk, aiohttp, uvicorn), which logging's last resort
    would otherwise write raw. One handler, on the root logger; calling it again adds none."""
    root = logging.getLogger()
    if not any(handler.get_name() == "petstore-bot" for handler in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.set_name("petstore-bot")
        handler.setFormatter(logging.Formatter(BOT_LOG_FORMAT))
        root.addHandler(handler)
    root.setLevel(logging.WARNING)  # the libraries: warnings and errors
    for logger in (log, logging.getLogger("petstore_state")):  # the lease changing hands, the shared state failing
        logger.setLevel(logging.DEBUG if verbose else logging.INFO)


def slack_main(
    settings: Settings,
    *,
    config_file: Path | None,
    host: str,
    port: int,
    mattermost: bool,
    socket_mode: bool = False,
    sandbox_reset: bool = False,
    audit_flag: Path | None = None,
    verbose: int = 0,
    metrics_port: int | None = None,
) -> int:
    """Entry point of ``petstore bot slack [--mattermost | --socket-mode]``: serve the endpoints (or, in Socket
    Mode, hold the WebSocket to Slack) until SIGTERM or Ctrl-C."""
    from petstore_bot.slack import SLACK_ORIGIN, SlackFace, post_json
    from petstore_bot.slack_verify import MattermostToken, SlackSignature
    from petstore_bot.slack_web import SlackWeb, SlackWebError

    bot, where = settings.bot, str(config_file or default_config_path())
    flavour: Literal["slack", "mattermost"] = "mattermost" if mattermost else "slack"
    signature, token, app_token = None, None, None
    if mattermost:
        if socket_mode:
            raise ConfigError("--socket-mode is Slack's: Mattermost calls the bot over HTTP (leave out one of them)")
        if not bot.mattermost.url or bot.mattermost.token is None:
            raise _not_set("bot.mattermost", "url" if not bot.mattermost.url else "token", where)
        token = MattermostToken(bot.mattermost.token.get_secret_value())
    elif socket_mode:
        app_token = slack_token(bot, "app_token", where=where, shape="xapp-")
        if app_token is None:
            raise _not_set("bot.slack", "app_token", where)
    elif bot.slack.signing_secret is None:
        raise _not_set("bot.slack", "signing_secret", where)
    else:
        signature = SlackSignature(bot.slack.signing_secret.get_secret_value())
    bot_token = None if mattermost else slack_token(bot, "bot_token", where=where, shape="xoxb-")
    configure_bot_logging(verbose=verbose)
    composition = compose_bot(settings, sandbox_reset=sandbox_reset, audit_flag=audit_flag)
    state = open_state(bot, state_dir=default_data_dir() / "bot", audit=composition.audit)
    # every replica serves; the lease holder alone runs the background work
    replication = open_replication(bot.state_url(), state_dir=default_data_dir() / "bot", name=f"{flavour} bot")
    notifications, announce = None, None
    if bot_token is not None:  # posting unasked (watches, schedules) needs chat.postMessage and so the bot token

        async def announce(room: str, reply: Reply, /, *, key: str | None = None) -> bool:
            return await face.announce(room, reply, key=key)

        notifications = bot_notifications(
            composition, bot, database=state.database, announce=announce, lease=replication.leadership.lease
        )
    health = bot_health(state, replication, port=metrics_port)
    core = build_core(
        composition,
        bot,
        platform=flavour,
        prefix=bot.slack.command + " ",
        state=state,
        notifications=notifications,
        observe=health.metrics.observe if health else None,
    )
    web = SlackWeb(bot_token=bot_token, api_url=bot.slack.api_url) if bot_token else None
    face = SlackFace(
        core=core,
        flavour=flavour,
        post=post_json,
        signature=signature,
        token=token,
        response_origin=(bot.mattermost.url or "") if mattermost else SLACK_ORIGIN,
        web=web,
    )
    if bot_token is None and not mattermost:
        log.info("[bot.slack] bot_token is not set: slash commands only (mentions and DMs need it)")
    poster = None
    if web is not None:
        from petstore_bot.approvals_room import slack_announce

        poster = approval_poster(
            bot,
            store=state.pending.store,
            announce=slack_announce(web, prefix=bot.slack.command + " "),
            seal=state.pending.seal,
            platform=flavour,
        )
    elif bot.approvals and bot.approvals_room:
        log.info("[bot] approvals_room is set, but requests made at a terminal are posted with a Slack bot_token")
    where_to = f"Socket Mode via {bot.slack.api_url}" if socket_mode else f"http://{host}:{port}"
    log.info(
        "petstore bot %s on %s; service %s %s; audit %s",
        flavour,
        where_to,
        composition.env.env,
        composition.env.base_url,
        composition.audit.path if composition.audit else "-",
    )
    leadership = replication.leadership
    background: list[Background] = [
        finisher(state, core, announce=announce, should_run=leadership.leading, lease=leadership.lease)
    ]
    if notifications is not None:
        background.append(
            notifier(notifications, core, announce=announce, should_run=leadership.leading, lease=leadership.lease)
        )
    if poster is not None:
        background.append(poster.gated(leadership.leading, lease=leadership.lease))
    if health is not None:
        background.append(health)
    try:
        if app_token is not None:
            from petstore_bot.slack_socket import SocketMode

            socket = SocketMode(face=face, app_token=app_token, api_url=bot.slack.api_url)
            run = beside(background, _started(face, socket.run))
            asyncio.run(_serve(lambda stop: replication.around(run, stop), composition, state))
            return EXIT_OK
        return _serve_slack_http(face, composition, state, replication, host=host, port=port, background=background)
    except SlackWebError as exc:
        print(f"petstore: slack: {exc}", file=sys.stderr)
        return EXIT_FAILED


def slack_token(bot: BotSettings, name: Literal["app_token", "bot_token"], *, where: str, shape: str) -> str | None:
    """``[bot.slack] <name>``, or the token in the file ``<name>_file`` names; None when neither is set. ConfigError,
    naming the setting, when both are, the file cannot be read, or the token does not start with ``shape``."""
    from petstore_os.files import read_secret_lines

    given: SecretStr | None = getattr(bot.slack, name)
    path: Path | None = getattr(bot.slack, f"{name}_file")
    setting = f"[bot.slack] {name}"
    if path is not None:
        if given is not None:
            raise ConfigError(f"both {setting} and {name}_file are set (in {where} or the environment): keep one")
        try:
            lines = read_secret_lines(path.expanduser(), warn=log.warning)
        except OSError as exc:
            raise ConfigError(f"{setting}_file: cannot read {path}: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"{setting}_file: {path} is not a text file (UTF-8)") from None
        if len(lines) != 1:
            raise ConfigError(f"{setting}_file: {path} should hold the token alone, on one line")
        given = SecretStr(lines[0][1])
    if given is None:
        return None
    value = given.get_secret_value()
    if not value.startswith(shape):
        raise ConfigError(f"{setting} does not look like one: Slack's start with {shape}... (Basic Information)")
    return value


def _started(
    face: SlackFace, run: Callable[[asyncio.Event], Awaitable[None]]
) -> Callable[[asyncio.Event], Awaitable[None]]:
    """``run``, once the face knows who the bot is (``auth.test``)."""

    async def started(stop: asyncio.Event) -> None:
        await face.start()
        await run(stop)

    return started


def _serve_slack_http(
    face: SlackFace,
    composition: Composition,
    state: BotState,
    replication: Replication,
    *,
    host: str,
    port: int,
    background: Sequence[Background] = (),
) -> int:
    import uvicorn

    from petstore_server.serve import QuietServer

    server = QuietServer(
        uvicorn.Config(
            face.app(),
            host=host,
            port=port,
            log_level="warning",
            log_config=None,  # uvicorn's lines go through the bot's handler and format (configure_bot_logging)
            access_log=False,
            lifespan="on",
        )
    )
    try:
        asyncio.run(_serve_http(server, face, composition, state, replication, background=background))
    except (OSError, SystemExit):  # uvicorn exits when it cannot listen (it logged why)
        return EXIT_FAILED
    return EXIT_OK if server.started else EXIT_FAILED


async def _serve_http(
    server: uvicorn.Server,
    face: SlackFace,
    composition: Composition,
    state: BotState,
    replication: Replication,
    *,
    background: Sequence[Background],
) -> None:
    stop = asyncio.Event()
    sweeper = asyncio.create_task(sweep(state.pending, stop=stop))
    tasks: list[asyncio.Task[None]] = []

    async def serve(_: asyncio.Event) -> None:
        await face.start()
        tasks.extend(asyncio.create_task(work.run(stop)) for work in background)
        await server.serve()

    try:
        await replication.around(serve, asyncio.Event())
    finally:
        stop.set()
        await sweeper
        await asyncio.gather(*tasks)
        await composition.aclose()
        state.close()
        log.info("petstore bot stopped")
