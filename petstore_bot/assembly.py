"""What the bot is made of, apart from any platform: the service the composition root gives it (:class:`Service`),
its state store (:class:`BotState`) and a core per platform (:func:`build_core`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from bot_commands.audit import AuditLog
from bot_commands.outcome import Outcome
from bot_commands.pending import PendingWrites
from bot_commands.policy import Actor, Policy
from bot_commands.ports import Notifications, PetStoreAPI
from bot_commands.registry import Registry
from bot_commands.results import EnvInfo
from bot_commands.session_parts import Sleep
from petstore_api.errors import ConfigError
from petstore_state import Database, StateError, open_database
from petstore_state.conversations import ConversationStore
from petstore_state.pending import PendingStore

from .core import BotCore
from .notifier import BotNotifications
from .pending import ApprovalsRoom, StoredPending, asking_room, room_approvers
from .ratelimit import RateLimiter, StoredRateLimiter
from .roles import RoleBook
from .rules import CHAT_HISTORY, bot_policy, chat_sleep, role_book
from .seal import Seal, load_key
from .settings import BotSettings

if TYPE_CHECKING:  # pragma: no cover
    from bot_commands.session import CommandSession

__all__ = ["BotState", "Service", "build_core", "open_state"]


class Service(Protocol):
    """What the composition root gives the bot: one client on the service, the face's policy and audit, and
    sessions on that client (``petstore_cli.compose.Composition`` is one; a test's sandbox another)."""

    @property
    def client(self) -> PetStoreAPI: ...
    @property
    def env(self) -> EnvInfo: ...
    @property
    def registry(self) -> Registry: ...
    @property
    def policy(self) -> Policy: ...
    @property
    def audit(self) -> AuditLog | None: ...

    def session(
        self,
        *,
        actor: Actor,
        policy: Policy,
        confirm_ttl: float,
        max_history: int | None,
        pending: PendingWrites | None,
        approval_ttl: float,
        sleep: Sleep,
        notifications: Notifications | None,
    ) -> CommandSession:
        """A new session on the shared client, built whole."""
        ...

    async def aclose(self) -> None:
        """Close the client and the audit log."""
        ...


@dataclass
class BotState:
    """The state store a bot runs on, and its held writes (confirmations and approvals) in it."""

    database: Database
    pending: StoredPending
    conversations: ConversationStore

    def close(self) -> None:
        self.database.close()


def open_state(
    bot: BotSettings,
    *,
    state_dir: Path,
    audit: AuditLog | None,
    database: Database | None = None,
    approvals_room: ApprovalsRoom = asking_room,
) -> BotState:
    """The ``[bot] state`` database (SQLite in ``state_dir`` when unset; ``database`` when it is open already);
    ConfigError, in one line, when it cannot be opened. ``approvals_room``: where requests for approval asked in
    chat are bound (:data:`~petstore_bot.pending.ApprovalsRoom`)."""
    key = bot.approval_key.get_secret_value() if bot.approval_key else None
    try:
        seal = Seal(load_key(setting=key, state_dir=state_dir))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"[bot] approval_key: {exc}") from None
    try:
        database = database or open_database(bot.state_url(), state_dir=state_dir)
        store, conversations = PendingStore(database), ConversationStore(database)
    except StateError as exc:
        raise ConfigError(str(exc)) from None
    approvers = room_approvers({room: grants.approvers for room, grants in bot.rooms.items()})
    pending = StoredPending(store, audit=audit, seal=seal, approvers=approvers, approvals_room=approvals_room)
    return BotState(database=database, pending=pending, conversations=conversations)


def build_core(
    service: Service,
    bot: BotSettings,
    *,
    platform: str,
    prefix: str | None = None,
    names: Sequence[str] = (),
    roles: RoleBook | None = None,
    state: BotState | None = None,
    notifications: BotNotifications | None = None,
    observe: Callable[[Outcome], None] | None = None,
) -> BotCore:
    """The bot core on ``service``'s client, with the ``[bot]`` settings (``prefix`` overrides bot.prefix:
    a slash command's, so no bare commands in direct messages); ``names``: what people call the bot; ``roles``:
    the role book the cores of one process share (default: a new one from the settings); ``state``: where held
    writes, rate windows and ``$last`` are kept (None: in memory, for tests of the core alone); ``notifications``:
    the watches and schedules its sessions reach (!watch, !every); ``observe``: told every outcome (metrics)."""
    roles = roles or role_book(bot)
    pending = state.pending.governed_by(roles, people=bot.who) if state is not None else None
    policy = bot_policy(service.policy, bot, env=service.env.env)

    def session(actor: Actor) -> CommandSession:
        return service.session(
            actor=actor,
            policy=policy,
            confirm_ttl=bot.confirm_ttl,
            max_history=CHAT_HISTORY,
            pending=pending,
            approval_ttl=bot.approval_ttl,
            sleep=chat_sleep,
            notifications=notifications.for_actor(actor) if notifications is not None else None,
        )

    return BotCore(
        sessions=session,
        roles=roles,
        limiter=RateLimiter(bot.rate) if state is None else StoredRateLimiter(bot.rate, store=state.conversations),
        conversations=state.conversations if state is not None else None,
        platform=platform,
        prefix=bot.prefix if prefix is None else prefix,
        commands=service.registry.names(),
        names=names,
        bare_in_direct=prefix is None,
        observe=observe,
    )
