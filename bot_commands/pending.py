"""Writes held for a person: the port through which a session defers a write and later runs or drops it.

A chat session does not run a write at once: it *holds* it (``/confirm CODE`` by the asker, or, on an environment
whose writes need a second person, ``/approve CODE`` by someone else) and runs it when the code comes back. Where the
held writes live is the composition's choice: :class:`MemoryPending` keeps them in the session (they die with it);
the bots wire a store shared by their processes (``petstore_bot.pending``), so a code survives a restart and works
on whichever replica it reaches. Either way a code is taken once: the port's :meth:`PendingWrites.take` is atomic.

The port returns a :class:`Decision` rather than raising: the wording of every refusal is the session's, in one
place (:func:`refusal_message`).
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from .parser import show
from .policy import Actor

__all__ = [
    "Decision",
    "HeldWrite",
    "HoldKind",
    "HoldRequest",
    "MemoryPending",
    "PendingWrites",
    "Refusal",
    "refusal_message",
]

HoldKind = Literal["confirm", "approve"]
#: Why a code was not taken: ``unknown``, ``not_yours`` (another person's or room's confirmation), ``own`` (an
#: approval by its asker), ``kind`` (an approval's code given to /confirm, or the reverse), ``expired``,
#: ``decided`` (already confirmed, approved, denied, cancelled or expired), ``not_approver`` (the room names its
#: approvers and this person is not one).
Refusal = Literal["unknown", "not_yours", "own", "kind", "expired", "decided", "not_approver"]
_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
#: Confirmations a session keeps in memory at most (the oldest is dropped first).
_MAX_MEMORY = 5


@dataclass(frozen=True, slots=True)
class HeldWrite:
    """A write waiting for a person, as the command layer sees it."""

    code: str
    kind: HoldKind
    asker: str
    role: str
    where: str
    #: The command as it will run (``$last`` expanded): parsed again when it runs.
    line: str
    what: str
    fields: tuple[tuple[str, str], ...]
    env: str
    created: float
    expires: float
    #: Its state now (``waiting``, ``approved``, ``denied``, ...): on a refusal, what it had become.
    state: str = "waiting"
    decided_by: str = ""
    reason: str = ""
    #: The chat event id of the message that asked for it.
    event_id: str = ""

    @property
    def ttl(self) -> float:
        return self.expires - self.created


@dataclass(frozen=True, slots=True, kw_only=True)
class HoldRequest:
    """A write to hold: who asks (``actor``), the line as it will run, what it does, every field it sends, the
    environment, for how long, and the chat event that asked."""

    kind: HoldKind
    actor: Actor
    line: str
    what: str
    fields: tuple[tuple[str, str], ...]
    env: str
    ttl: float
    event_id: str = ""


@dataclass(frozen=True, slots=True)
class Decision:
    """The held write a code named, and why it was not taken (None: taken, it is the caller's to run or drop)."""

    write: HeldWrite | None
    refusal: Refusal | None = None


class PendingWrites(Protocol):
    """Where a session holds its writes (see the module docstring). Every method is one atomic step."""

    async def hold(self, request: HoldRequest, /) -> HeldWrite:
        """Keep a write under a fresh code until ``request.ttl`` seconds from now."""
        ...

    async def take(self, code: str, *, kind: HoldKind, actor: Actor) -> Decision:
        """Take ``code`` to run it now: a confirmation by its asker in the same place, an approval by someone
        allowed to approve who is not its asker. Taken once, whatever the number of processes."""
        ...

    async def finish(self, code: str, *, ok: bool, result: str) -> None:
        """Record how the run of a taken write ended (``result``: what it said, in one line)."""
        ...

    async def cancel(self, code: str, *, actor: Actor) -> Decision:
        """Drop a write its own asker no longer wants."""
        ...

    async def deny(self, code: str, *, actor: Actor, reason: str) -> Decision:
        """Drop a request for approval (by someone who may approve it, not its asker)."""
        ...


class MemoryPending:
    """Held writes in the memory of one session: they die with it (faces without a state store, tests)."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self._held: OrderedDict[str, HeldWrite] = OrderedDict()

    async def hold(self, request: HoldRequest, /) -> HeldWrite:
        code = "".join(secrets.choice(_ALPHABET) for _ in range(4 if request.kind == "confirm" else 6))
        while len(self._held) >= _MAX_MEMORY:
            self._held.popitem(last=False)
        now, actor = self.clock(), request.actor
        held = HeldWrite(
            code=code,
            kind=request.kind,
            asker=actor.id,
            role=str(actor.role),
            where=actor.where,
            line=request.line,
            what=request.what,
            fields=request.fields,
            env=request.env,
            created=now,
            expires=now + request.ttl,
            event_id=request.event_id,
        )
        self._held[code] = held
        return held

    async def take(self, code: str, *, kind: HoldKind, actor: Actor) -> Decision:
        held = self._held.get(code.strip().upper())
        if held is None:
            return Decision(None, "unknown")
        if held.kind != kind:
            return Decision(held, "kind")
        if kind == "confirm" and held.asker != actor.id:
            return Decision(held, "not_yours")
        if kind == "approve" and held.asker == actor.id:
            return Decision(held, "own")
        del self._held[held.code]
        if self.clock() >= held.expires:
            return Decision(replace(held, state="expired"), "expired")
        return Decision(replace(held, state="approved", decided_by=actor.id))

    async def finish(self, code: str, *, ok: bool, result: str) -> None:
        return None

    async def cancel(self, code: str, *, actor: Actor) -> Decision:
        held = self._held.get(code.strip().upper())
        if held is None or held.asker != actor.id:
            return Decision(held, "unknown" if held is None else "not_yours")
        del self._held[held.code]
        return Decision(replace(held, state="cancelled", decided_by=actor.id))

    async def deny(self, code: str, *, actor: Actor, reason: str) -> Decision:
        held = self._held.get(code.strip().upper())
        if held is None or held.kind != "approve" or held.asker == actor.id:
            return Decision(held, "unknown" if held is None else "kind" if held.kind != "approve" else "own")
        del self._held[held.code]
        return Decision(replace(held, state="denied", decided_by=actor.id, reason=reason))


def refusal_message(decision: Decision, *, code: str, prefix: str = "/") -> str:
    """The one line that says why ``code`` was not taken (never who else asked for what)."""
    shown, held = show(code.strip().upper(), 12), decision.write
    refusal = decision.refusal
    if refusal in ("unknown", "not_yours") or held is None:
        return f"nothing waits for code {shown}: a code works once, for the person it was given to"
    if refusal == "own":
        return f"you asked for {held.what} yourself: someone else must approve it ({prefix}cancel {shown} drops it)"
    if refusal == "kind" and held.kind == "approve":
        return f"code {shown} asks for approval: someone other than its asker answers {prefix}approve {shown}"
    if refusal == "kind":
        return f"code {shown} is a confirmation: its asker answers {prefix}confirm {shown}"
    if refusal == "expired":
        return f"code {shown} expired after {round(held.ttl)} s; nothing was sent: run the command again"
    if refusal == "not_approver":
        return f"code {shown} may be approved only by the approvers this room names"
    by = f" by {held.decided_by}" if held.decided_by and held.kind == "approve" else ""
    return f"code {shown} was already {_word(held)}{by}: a code works once"


def _word(held: HeldWrite) -> str:
    if held.state in ("approved", "done", "failed"):
        return "approved" if held.kind == "approve" else "confirmed"
    return {"expired": "closed (it expired)"}.get(held.state, held.state)
