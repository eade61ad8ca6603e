"""The bots' held writes in the shared state store: the command layer's :class:`~bot_commands.pending.PendingWrites`
port on :class:`~petstore_state.pending.PendingStore`.

A confirmation or a request for approval is a row in the store, not a session's memory: it survives a restart of the
bot and works on whichever replica the ``!confirm`` (or the Confirm button) reaches, once. Who may approve in a room
is the room's ``approvers`` when ``[bot.rooms."<id>"]`` names them (they must be operators there too), else any
operator but the asker. :meth:`StoredPending.close_expired` closes in the audit every write that expired without a
decision; :func:`sweep` calls it every second for as long as the bot runs, so a ``pending`` audit line is closed
when its code expires, not when someone next tries it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Collection, Iterator, Sequence

from bot_commands.audit import AuditEntry, AuditLog
from bot_commands.errors import CommandError, RefusedError
from bot_commands.pending import Decision, HeldWrite, HoldKind, HoldRequest
from bot_commands.policy import Actor
from petstore_state import StateError
from petstore_state.pending import PendingStore, PendingWrite, TakeResult

__all__ = ["Approvers", "StoredPending", "room_approvers", "sweep"]

log = logging.getLogger("petstore_bot")

Approvers = Callable[[str], Collection[str] | None]
"""Who may approve writes asked for at ``where`` (``platform:room``), or None: any operator but the asker."""
#: Seconds between two looks for expired writes.
SWEEP_INTERVAL = 1.0
#: Decided rows are kept this long (for ``petstore approvals`` and a terminal waiting on its request), then deleted.
KEEP_DECIDED = 7 * 86_400.0
#: Seconds between two deletions of old decided rows.
PURGE_INTERVAL = 3600.0


def no_approvers(where: str) -> Collection[str] | None:
    return None


class StoredPending:
    """Held writes in ``store``; expired ones closed in ``audit`` (see the module docstring)."""

    def __init__(self, store: PendingStore, *, audit: AuditLog | None, approvers: Approvers = no_approvers) -> None:
        self.store = store
        self.audit = audit
        self.approvers = approvers

    async def hold(self, request: HoldRequest, /) -> HeldWrite:
        actor = request.actor
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
            )
        return held_write(made)

    async def take(self, code: str, *, kind: HoldKind, actor: Actor) -> Decision:
        with _unavailable():
            return await self._take(code, kind=kind, actor=actor)

    async def _take(self, code: str, *, kind: HoldKind, actor: Actor) -> Decision:
        if kind == "approve":
            found = await self.store.get(code)
            if found is not None and found.kind == "approve" and found.asker != actor.id and found.waiting:
                names = self.approvers(found.where)
                if names is None and found.where != actor.where:
                    names = self.approvers(actor.where)  # asked at a terminal: the approvals room's approvers
                if names is not None and actor.id not in names:
                    return Decision(held_write(found), "not_approver")
        where = actor.where if kind == "confirm" else None
        return await self._decision(await self.store.take(code, kind=kind, by=actor.id, where=where))

    async def finish(self, code: str, *, ok: bool, result: str) -> None:
        """Best effort: the write has run; a store failing now must not turn its result into a failure."""
        try:
            await self.store.finish(code, ok=ok, result=result)
        except StateError as exc:
            log.warning("the end of %s not recorded: %s", code, exc)

    async def cancel(self, code: str, *, actor: Actor) -> Decision:
        with _unavailable():
            return await self._decision(await self.store.cancel(code, by=actor.id, where=actor.where))

    async def deny(self, code: str, *, actor: Actor, reason: str) -> Decision:
        with _unavailable():
            return await self._deny(code, actor=actor, reason=reason)

    async def _deny(self, code: str, *, actor: Actor, reason: str) -> Decision:
        found = await self.store.get(code)
        if found is not None and found.kind == "approve" and found.asker != actor.id:
            names = self.approvers(found.where)
            if names is not None and actor.id not in names:
                return Decision(held_write(found), "not_approver")
        return await self._decision(await self.store.deny(code, by=actor.id, reason=reason))

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
        return Decision(held, taken.refusal)


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
    )


def expired_entry(write: PendingWrite) -> AuditEntry:
    """The audit line that closes a write nobody confirmed (or approved) in time."""
    waited = "approval by a second person" if write.kind == "approve" else "confirmation"
    return AuditEntry(
        actor=write.asker,
        role=write.role,
        where=write.where,
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
        room = where.split(":", 1)[1] if ":" in where else where
        for key in (room, room.rpartition("/")[2]):  # Slack's rooms are team/channel; the settings name the channel
            names = rooms.get(key)
            if names is not None:
                return frozenset(names)
        return None

    return approvers


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
