"""The bots' held writes in the shared state store: the command layer's :class:`~bot_commands.pending.PendingWrites`
port on :class:`~petstore_state.pending.PendingStore`.

A confirmation or a request for approval is a row in the store, not a session's memory: it survives a restart of the
bot and works on whichever replica the ``!confirm`` (or the Confirm button) reaches, once. Who may decide what is
:func:`bot_commands.pending.refusal`'s to say, asked inside the store's transition with the grants of the request's
room at the time (:class:`RoomAuthority`: the role book, and a room's ``approvers`` when ``[bot.rooms."<id>"]``
names them); what runs must still carry the bots' seal (:mod:`petstore_bot.seal`), else it is refused as changed.
:meth:`StoredPending.close_expired` closes in the audit every write that expired without a decision; :func:`sweep`
calls it every second for as long as the bot runs, so a ``pending`` audit line is closed when its code expires,
not when someone next tries it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Collection, Iterator, Sequence
from typing import cast, get_args

from bot_commands.audit import AuditEntry, AuditLog
from bot_commands.errors import CommandError, RefusedError
from bot_commands.pending import (
    Authority,
    Decision,
    HeldWrite,
    HoldKind,
    HoldRequest,
    Refusal,
    Step,
    refusal,
    same_person,
)
from bot_commands.people import People
from bot_commands.policy import Actor, Role, room_of
from petstore_state import StateError
from petstore_state.lease import Lease
from petstore_state.pending import PendingStore, PendingWrite, State, TakeResult

from .chat import Reply
from .replicas import fence_of, may_act
from .roles import RoleBook
from .seal import Seal
from .watcher import Announce

__all__ = ["Approvers", "RoomAuthority", "StoredPending", "TakenFinisher", "room_approvers", "sweep"]

log = logging.getLogger("petstore_bot")

Approvers = Callable[[str], Collection[str] | None]
"""Who may approve writes asked for at ``where`` (``platform:room``), or None: any operator but the asker."""
ApprovalsRoom = Callable[[], str | None]
"""The room (``platform:room``) requests for approval asked in chat are bound to and posted in (``[bot]
approvals_room``, on the platform whose room it is), or None: each is decided in the room where it was asked."""
#: Seconds between two looks for expired writes.
SWEEP_INTERVAL = 1.0
#: Decided rows are kept this long (for ``petstore approvals`` and a terminal waiting on its request), then deleted.
KEEP_DECIDED = 7 * 86_400.0
#: Seconds between two deletions of old decided rows.
PURGE_INTERVAL = 3600.0
#: The state each step moves a held write to.
_TO: dict[Step, State] = {"confirm": "approved", "approve": "approved", "deny": "denied", "cancel": "cancelled"}
_REFUSALS: frozenset[str] = frozenset(get_args(Refusal))


def no_approvers(where: str) -> Collection[str] | None:
    return None


def asking_room() -> str | None:
    return None


class RoomAuthority:
    """The :class:`~bot_commands.pending.Authority` of a bot: roles from its role book (the one its core asks, so
    power levels count as they change), approvers from ``[bot.rooms]``, who is who from ``[bot.people]``."""

    def __init__(self, roles: RoleBook, *, approvers: Approvers = no_approvers, people: People | None = None) -> None:
        self.roles, self._approvers, self.people = roles, approvers, people or People()

    def same(self, one: str, other: str) -> bool:
        return same_person(one, other, people=self.people)

    def names(self, user: str) -> tuple[str, ...]:
        return self.people.names(user)

    def role_in(self, user: str, room: str) -> Role:
        place = room_of(room)
        return self.roles.role_for(user, place) if place else self.roles.role_for(user)

    def approvers(self, room: str) -> Collection[str] | None:
        return self._approvers(room)


class StoredPending:
    """Held writes in ``store``, sealed with ``seal``, decided as ``authority`` allows; expired ones closed in
    ``audit`` (see the module docstring). Without an authority (the sweep's) nothing is decided."""

    def __init__(
        self,
        store: PendingStore,
        *,
        audit: AuditLog | None,
        seal: Seal,
        approvers: Approvers = no_approvers,
        authority: Authority | None = None,
        approvals_room: ApprovalsRoom = asking_room,
    ) -> None:
        self.store, self.audit, self.seal = store, audit, seal
        self.approvers = approvers
        self.authority = authority
        #: Where a request for approval asked in chat is bound (docs/security.md: asked on one platform, approved
        #: on another).
        self.approvals_room = approvals_room

    def governed_by(self, roles: RoleBook, *, people: People | None = None) -> StoredPending:
        """This port deciding by ``roles`` (the core's role book), this port's approvers and ``people``."""
        authority = RoomAuthority(roles, approvers=self.approvers, people=people)
        return StoredPending(
            self.store,
            audit=self.audit,
            seal=self.seal,
            approvers=self.approvers,
            authority=authority,
            approvals_room=self.approvals_room,
        )

    async def hold(self, request: HoldRequest, /) -> HeldWrite:
        actor = request.actor
        room = (self.approvals_room() if request.kind == "approve" else None) or actor.where
        with _unavailable():
            made = await self.store.create(
                kind=request.kind,
                asker=actor.id,
                role=str(actor.role),
                where=actor.where,
                line=request.line,
                what=request.what,
                fields=request.fields,
                env=request.env,
                ttl=request.ttl,
                event_id=request.event_id,
                command=request.command,
                room=room,
                seal=self.seal,
            )
        return held_write(made)

    async def take(self, code: str, *, kind: HoldKind, actor: Actor) -> Decision:
        return await self._step(code, step=kind, actor=actor)

    async def finish(self, code: str, *, ok: bool, result: str) -> None:
        """Best effort: the write has run; a store failing now must not turn its result into a failure."""
        try:
            await self.store.finish(code, ok=ok, result=result)
        except StateError as exc:
            log.warning("the end of %s not recorded: %s", code, exc)

    async def cancel(self, code: str, *, actor: Actor) -> Decision:
        return await self._step(code, step="cancel", actor=actor)

    async def deny(self, code: str, *, actor: Actor, reason: str) -> Decision:
        return await self._step(code, step="deny", actor=actor, reason=reason)

    async def _step(self, code: str, *, step: Step, actor: Actor, reason: str = "") -> Decision:
        """One decision on ``code``: the rules and the seal checked inside the transaction that moves it."""
        authority = self.authority
        if authority is None:
            raise RefusedError("held writes are not decided here; nothing was sent")
        now = self.store.clock()

        def check(row: PendingWrite) -> str | None:
            refused = refusal(held_write(row), step=step, actor=actor, now=now, authority=authority)
            if refused is None and step in ("confirm", "approve") and not self.seal.holds(row):
                return "other_key" if self.seal.foreign(row) else "changed"
            return refused

        with _unavailable():
            taken = await self.store.transition(code, check=check, to=_TO[step], by=actor.id, reason=reason)
        return await self._decision(taken)

    async def close_expired(self) -> list[PendingWrite]:
        """Close every held write past its expiry, each in one audit line (this process's only: the store hands
        each to one caller)."""
        closed = await self.store.expire_due()
        if self.audit is not None:
            for write in closed:
                self.audit.write(expired_entry(write))
        return closed

    async def _decision(self, taken: TakeResult) -> Decision:
        if taken.refusal == "expired":
            await self.close_expired()
        held = held_write(taken.write) if taken.write is not None else None
        refused = taken.refusal
        if refused == "other_key":
            log.warning("a held write was sealed by a bot with another key: give every replica one [bot] approval_key")
        if refused is not None and refused not in _REFUSALS:
            raise RefusedError(f"the state store refused the code ({refused}); nothing was sent")
        return Decision(held, cast("Refusal | None", refused))


@contextlib.contextmanager
def _unavailable() -> Iterator[None]:
    """The store failing before anything was sent: a refusal in one line (the person may try again)."""
    try:
        yield
    except StateError as exc:
        raise RefusedError(f"{exc}; nothing was sent: try again") from None


def held_write(write: PendingWrite) -> HeldWrite:
    return HeldWrite(
        code=write.code,
        kind=write.kind,
        asker=write.asker,
        role=write.role,
        where=write.where,
        line=write.line,
        what=write.what,
        fields=write.fields,
        env=write.env,
        created=write.created,
        expires=write.expires,
        state=write.state,
        decided_by=write.decided_by,
        reason=write.reason,
        event_id=write.event_id,
        command=write.command,
        room=write.room,
    )


def expired_entry(write: PendingWrite) -> AuditEntry:
    """The audit line that closes a write nobody confirmed (or approved) in time."""
    waited = "approval by a second person" if write.kind == "approve" else "confirmation"
    return AuditEntry(
        actor=write.asker,
        role=write.role,
        where=write.room or write.where,
        line=write.line,
        outcome="expired",
        applied="no",
        message=f"no {waited} within {round(write.expires - write.created)} s; nothing was sent",
        event_id=write.event_id,
        pending_code=write.code,
    )


def room_approvers(rooms: dict[str, Sequence[str] | None]) -> Approvers:
    """An :data:`Approvers` from ``[bot.rooms]``: room id -> its ``approvers`` (None: not named)."""

    def approvers(where: str) -> Collection[str] | None:
        room = room_of(where) if ":" in where else where
        for key in (room, room.rpartition("/")[2]):  # Slack's rooms are team/channel; the settings name the channel
            names = rooms.get(key)
            if names is not None:
                return frozenset(names)
        return None

    return approvers


Resume = Callable[[HeldWrite], Awaitable[Reply]]
"""Finish one write taken and never finished, and say how it ended (``BotCore.resume``)."""


class TakenFinisher:
    """Finishes, as background work of the lease holder, every held write of its platform taken before ``started``
    and never finished (``approved`` in the store: the bot that took it stopped between the service's commit and
    the record of its end): each is claimed under ``lease`` (one finisher of several), ``resume`` sends it again
    under its code's Idempotency-Key and writes the ``ok`` audit line naming asker and approver, and the room is
    told with ``announce`` while the lease is still valid."""

    def __init__(
        self,
        store: PendingStore,
        *,
        platform: str,
        resume: Resume,
        announce: Announce,
        started: float,
        lease: Lease | None = None,
        interval: float = SWEEP_INTERVAL,
    ) -> None:
        self.store, self.platform, self.resume, self.announce = store, platform, resume, announce
        self.started, self.interval = started, interval
        #: The replicas' lease: each write is claimed under it before it is sent again, and told only while valid.
        self.lease = lease

    async def run(self, stop: asyncio.Event) -> None:
        """Finish what was left once (a failing store: tried again every ``interval`` until ``stop``)."""
        while not stop.is_set():
            try:
                await self.finish_taken()
                return
            except StateError as exc:
                log.warning("cannot finish the writes left taken: %s", exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=self.interval)

    async def finish_taken(self) -> int:
        """Finish each write left taken; how many were."""
        finished = 0
        for write in await self.store.taken():
            platform, room = write.room.partition(":")[0], room_of(write.room)
            if platform != self.platform or write.decided is None or write.decided >= self.started:
                continue  # another platform's, or taken by a process running now
            if not await self.store.claim_taken(write, fence=fence_of(self.lease)):
                continue  # another finisher claimed it first (or this one lost the lease)
            log.info("finishing %s, taken by %s before a restart", write.code, write.decided_by)
            reply = await self.resume(held_write(write))
            if may_act(self.lease):
                await self.announce(room, reply, key=f"finished {write.code}")
            finished += 1
        return finished


async def sweep(pending: StoredPending, *, stop: asyncio.Event, interval: float = SWEEP_INTERVAL) -> None:
    """Close expired held writes in the audit every ``interval`` seconds until ``stop`` is set; once an hour,
    delete rows decided more than a week ago."""
    loop = asyncio.get_running_loop()
    purged = loop.time()
    while not stop.is_set():
        try:
            await pending.close_expired()
            if loop.time() - purged >= PURGE_INTERVAL:
                purged = loop.time()
                await pending.store.purge(older_than=KEEP_DECIDED)
        except (StateError, CommandError) as exc:  # the database (or disk) fails for a moment: try again next time
            log.warning("cannot close expired confirmations: %s", exc)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval)
