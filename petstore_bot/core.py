"""The bot core: chat messages in, command outcomes out, for every chat platform.

One :class:`BotCore` serves a whole bot: it keeps one command session per (room, user) on the shared client (so
``$last``, ``!more`` and history are each person's own), runs a person's commands one at a time, gives each the
role the room's grants give them now (:mod:`~petstore_bot.roles`: looked up for every command, so a change of
grants or power levels counts from the next one), rate-limits per user (:mod:`~petstore_bot.ratelimit` says what
they are told), and turns the outcome into a :class:`~petstore_bot.chat.Reply`. The policy (roles, read-only,
deferred confirmation) and the audit log are the command layer's own; a transport (Matrix, Slack) only moves
messages. No chat SDK is imported here.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from bot_commands.outcome import Outcome
from bot_commands.pending import HeldWrite
from bot_commands.policy import Access, Actor, Role, room_of, same_where, where_in
from bot_commands.results import ApprovalNeeded, ConfirmationNeeded, PetCreated
from petstore_state import StateError
from petstore_state.conversations import ConversationStore

from .addressing import Addressing
from .chat import Incoming, Reply
from .ratelimit import Limiter, Verdict
from .replies import notice_reply, reply_for
from .roles import RoleBook

if TYPE_CHECKING:  # pragma: no cover
    from bot_commands.session import CommandSession  # made by the composition root, at a person's first message

__all__ = ["BotCore", "SessionFactory", "write_mark"]

log = logging.getLogger("petstore_bot")

SessionFactory = Callable[[Actor], "CommandSession"]
"""Makes a session on the shared client for one actor (``Composition.session`` with the bot's policy)."""

#: Conversations remembered at most; the least recently used are forgotten first (their state with them).
MAX_SESSIONS = 10_000
_QUIET = frozenset({Access.LOCAL, Access.READ})
_MARKED = frozenset({Access.WRITE, Access.CONFIRM, Access.APPROVE})
SLOW_DOWN = "Slow down: at most {count} commands in {seconds:g} s per person; yours are ignored until then."


@dataclass
class _Conversation:
    session: CommandSession
    lock: asyncio.Lock


class BotCore:
    """Answers the messages addressed to the bot (they start with ``prefix``); see the module docstring.

    ``commands``: the command names (aliases too) of the sessions' registry; ``names``: what people call the bot
    (``petbot``, its user id), for mentions (:mod:`~petstore_bot.addressing`); ``bare_in_direct``: a direct
    message's command needs no prefix (chats whose commands have no slash of their own).
    """

    def __init__(
        self,
        *,
        sessions: SessionFactory,
        roles: RoleBook,
        limiter: Limiter,
        platform: str,
        prefix: str = "!",
        commands: Collection[str] = (),
        names: Sequence[str] = (),
        bare_in_direct: bool = True,
        conversations: ConversationStore | None = None,
        observe: Callable[[Outcome], None] | None = None,
    ) -> None:
        self.prefix = prefix
        #: Told every command's outcome (the process's metrics), when set.
        self._observe = observe
        self.platform = platform
        #: The command names (aliases too) of the sessions' registry, for replies that name a command.
        self.commands: frozenset[str] = frozenset(commands)
        #: What counts as a message for the bot, and the help line that says it.
        self.addressing = Addressing(
            prefix=prefix, commands=self.commands, names=tuple(names), bare_in_direct=bare_in_direct
        )
        self._make_session = sessions
        self._roles = roles
        self._limiter = limiter
        self._conversations: OrderedDict[tuple[str, str], _Conversation] = OrderedDict()
        #: Where each conversation's ``$last`` is kept between commands (shared by replicas), when set.
        self._memory = conversations

    def addressed(self, text: str) -> bool:
        """Whether ``text`` is a command for the bot: the prefix, then a command name (``!list``, ``!/list``)."""
        return self.addressing.prefixed(text)

    @property
    def roles(self) -> RoleBook:
        return self._roles

    def role_of(self, user: str, *, room: str | None = None) -> Role:
        """``user``'s role in ``room`` now (None: where no room's grants apply)."""
        return self._roles.role_for(user, room)

    async def handle(self, message: Incoming) -> Reply | None:
        """The reply to one message, or None when the message is not for the bot or the sender is silenced."""
        answer = await self.answer(message)
        if isinstance(answer, Outcome):
            reply = reply_for(answer, prefix=self.prefix, commands=self.commands, addressing=self.addressing)
            return replace(reply, mark=write_mark(answer))
        return None if answer is None else notice_reply(answer)

    async def answer(self, message: Incoming) -> Outcome | str | None:
        """The outcome of the command in ``message``; a short notice when the sender is over the rate limit
        (in a room once, see ratelimit), None when the message is not for the bot or the sender is silenced."""
        if not self.addressed(message.text):
            return None
        verdict = await self._limiter.admit(message.user, private=message.private)
        if verdict is Verdict.DROP:
            return None
        if verdict is Verdict.WARN:
            rate = self._limiter.rate
            return SLOW_DOWN.format(count=rate.count, seconds=rate.seconds)
        outcome = await self.run(message)
        self._answered(message, outcome)
        return outcome

    async def run(self, message: Incoming) -> Outcome:
        """Run the command in ``message`` in its sender's session (after the sender's earlier commands)."""
        conversation = self._conversation(message)
        line = "/" + message.text.removeprefix(self.prefix).lstrip("/")  # as every face records it: /add ...
        request_id = f"{self.platform}:{message.room}:{message.event_id}"
        lock, session = conversation.lock, conversation.session
        await lock.acquire()  # not ``async with``: two coroutines less a command, same lock
        try:
            role = self._roles.role_for(message.user, message.room)  # now: grants or power levels may have changed
            session.assume_role(role)
            known = await self._recall(session) if self._memory is not None and "$" in line else session.last_pet_id
            outcome = await session.run(
                line, request_id=request_id, event_id=message.event_id, confirm_write=message.confirm_writes
            )
            if self._memory is not None and session.last_pet_id != known:
                await self._keep(session)
            return outcome
        finally:
            lock.release()

    async def _recall(self, session: CommandSession) -> int | None:
        """``$last`` of the session's conversation as the store has it (another replica, or before a restart)."""
        assert self._memory is not None
        try:
            stored = await self._memory.last_pet(where=session.actor.where, user=session.actor.id)
        except StateError as exc:
            log.warning("$last not read from the state: %s", exc)
            return session.last_pet_id
        if stored is not None:
            session.last_pet_id = stored
        return session.last_pet_id

    async def _keep(self, session: CommandSession) -> None:
        assert self._memory is not None and session.last_pet_id is not None
        try:
            await self._memory.remember_pet(
                where=session.actor.where, user=session.actor.id, pet_id=session.last_pet_id
            )
        except StateError as exc:
            log.warning("$last not kept in the state: %s", exc)

    def _answered(self, message: Incoming, outcome: Outcome) -> None:
        _log_outcome(message, outcome)
        if self._observe is not None:
            self._observe(outcome)

    async def reply_as(self, *, room: str, user: str, line: str) -> Reply:
        """The reply to ``line`` run in ``room`` as ``user`` with their role now, in a session of its own (a
        schedule's run: the person's conversation and its ``$last`` are left alone); writes are refused."""
        actor = Actor(id=user, role=self._roles.role_for(user, room), where=where_in(self.platform, room))
        session = self._make_session(actor).read_only_view()
        outcome = await session.run(line)
        self._answered(Incoming(platform=self.platform, room=room, user=user, event_id="", text=line), outcome)
        return reply_for(outcome, prefix=self.prefix, commands=self.commands, addressing=self.addressing)

    async def resume(self, held: HeldWrite) -> Reply:
        """The reply to finishing ``held``, a write taken before a restart and never finished, in a session of the
        person who took it, in its room (:meth:`~bot_commands.session.CommandSession.resume_held`)."""
        room = room_of(held.room)
        actor = Actor(id=held.decided_by, role=self._roles.role_for(held.decided_by, room), where=same_where(held.room))
        outcome = await self._make_session(actor).resume_held(held)
        _log_outcome(
            Incoming(platform=self.platform, room=room, user=actor.id, event_id="", text=outcome.line), outcome
        )
        reply = reply_for(outcome, prefix=self.prefix, commands=self.commands, addressing=self.addressing)
        return replace(reply, mark=write_mark(outcome))

    def session_of(self, *, room: str, user: str) -> CommandSession | None:
        """The session of ``user`` in ``room``, if they have talked to the bot there (for tests and demos)."""
        found = self._conversations.get((room, user))
        return found.session if found else None

    def _conversation(self, message: Incoming) -> _Conversation:
        key = (message.room, message.user)
        found = self._conversations.get(key)
        if found is not None:
            self._conversations.move_to_end(key)
            return found
        role = self._roles.role_for(message.user, message.room)
        actor = Actor(id=message.user, role=role, where=where_in(self.platform, message.room))
        made = self._conversations[key] = _Conversation(session=self._make_session(actor), lock=asyncio.Lock())
        if not self.commands:
            self.commands = frozenset(made.session.registry.names())
            self.addressing = replace(self.addressing, commands=self.commands)
        while len(self._conversations) > MAX_SESSIONS:
            self._conversations.popitem(last=False)
        return made


def write_mark(outcome: Outcome) -> str | None:
    """``✅`` for a write done, ``❌`` for one refused or failed, None otherwise (reads, a write still waiting)."""
    command = outcome.command
    if command is None or command.access not in _MARKED or command.name in ("cancel", "deny"):
        return None
    if isinstance(outcome.result, ConfirmationNeeded | ApprovalNeeded):
        return None
    return "✅" if outcome.failure is None else "❌"


def _log_outcome(message: Incoming, outcome: Outcome) -> None:
    """One line per command: writes, confirmations and failures at INFO; successful reads only at DEBUG (``-v``).

    Writes are also in the audit log; a line per read at INFO would cost a busy bot more than the read itself.
    """
    command = outcome.invocation.command if outcome.invocation else None
    quiet = outcome.failure is None and command is not None and command.access in _QUIET
    level = logging.DEBUG if quiet else logging.INFO
    if log.isEnabledFor(level):
        kind = outcome.failure.kind if outcome.failure else type(outcome.result).__name__
        if isinstance(outcome.result, PetCreated) and outcome.result.replayed:
            kind += " (the service's replay: nothing new)"
        log.log(level, "%s in %s: %r -> %s", message.user, message.room, outcome.line, kind)
