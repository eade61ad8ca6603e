"""Writes held for a person: the one set of rules of who may confirm, approve, deny or cancel what, and where, and
the port through which a session holds a write and later runs or drops it.

A chat session does not run a write at once: it *holds* it (``/confirm CODE`` by the asker, or, on an environment
whose writes need a second person, ``/approve CODE`` by someone else) and runs it when the code comes back. The
bots keep held writes in a store their processes share (``petstore_bot.pending``), so a code survives a restart and
works on whichever replica it reaches; the store offers a transition and runs :func:`refusal` inside it, so a code
is taken once and only as these rules allow.

A held write is *bound* when it is made: to its environment, its room (a terminal's request: the approvals room,
when a bot posts it there) and that room's grants. It is decided in that room only, by someone allowed there at the
time of the decision: :func:`refusal` asks the :class:`Authority` for the approver's and the asker's roles then.

The port returns a :class:`Decision` rather than raising: the wording of every refusal is the session's, in one
place (:func:`refusal_message`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Literal, Protocol

from petstore_os.records import record

from .parser import show
from .people import People
from .policy import Access, Actor, Role, room_of, same_where, where_in

__all__ = [
    "BINDING",
    "Authority",
    "Decision",
    "HeldWrite",
    "HoldKind",
    "HoldRequest",
    "PendingWrites",
    "Refusal",
    "Step",
    "in_room",
    "refusal",
    "refusal_message",
    "same_person",
]

HoldKind = Literal["confirm", "approve"]
#: What a person does with a code.
Step = Literal["confirm", "approve", "deny", "cancel"]
#: Why a code was not taken: ``unknown``, ``not_yours`` (another person's or room's confirmation), ``own`` (an
#: approval by its asker), ``kind`` (an approval's code given to /confirm, or the reverse), ``expired``,
#: ``decided`` (already confirmed, approved, denied, cancelled or expired), ``elsewhere`` (a request decided in
#: another room than its own, or not posted yet), ``not_approver`` (the room names its approvers and this person is
#: not one), ``approver_role`` / ``asker_role`` (the approver, or the asker, no longer has the role it needs in the
#: request's room), ``changed`` (what would run is not what was shown), ``other_key`` (sealed by a bot whose key
#: this one does not hold).
Refusal = Literal[
    "unknown",
    "not_yours",
    "own",
    "kind",
    "expired",
    "decided",
    "elsewhere",
    "not_approver",
    "approver_role",
    "asker_role",
    "changed",
    "other_key",
]
#: Refusals of a code someone tried where they may not: audited in the request's room, not the trier's.
BINDING: frozenset[str] = frozenset({"not_yours", "elsewhere", "not_approver", "approver_role", "asker_role"})


@record
class HeldWrite:
    """A write waiting for a person, as the command layer sees it."""

    code: str
    kind: HoldKind
    asker: str
    role: str
    #: Where it was asked (``platform:room`` or ``terminal``).
    where: str
    #: The command as typed (``$last`` expanded), for people and the audit: never parsed again.
    line: str
    what: str
    #: What runs: the command (``add``) with these fields, by their API names.
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
    command: str = ""
    #: The room it is decided in (``platform:room``); empty while a terminal's request is not posted yet.
    room: str = ""

    @property
    def ttl(self) -> float:
        return self.expires - self.created


@record(kw_only=True)
class HoldRequest:
    """A write to hold: who asks (``actor``, in the room it is bound to), the command and every field it sends,
    the line as typed, what it does, the environment, for how long, and the chat event that asked."""

    kind: HoldKind
    actor: Actor
    command: str
    line: str
    what: str
    fields: tuple[tuple[str, str], ...]
    env: str
    ttl: float
    event_id: str = ""


@record
class Decision:
    """The held write a code named, and why it was not taken (None: taken, it is the caller's to run or drop)."""

    write: HeldWrite | None
    refusal: Refusal | None = None


class Authority(Protocol):
    """What a room grants at the time of a decision (the bots' role book and ``[bot.rooms]``), and who is who
    (``[bot.people]``)."""

    def same(self, one: str, other: str) -> bool:
        """Whether two names are one person (:func:`same_person` with the bots' ``[bot.people]``)."""
        ...

    def names(self, user: str) -> tuple[str, ...]:
        """Every name of the person ``user`` is (``user`` first), from ``[bot.people]``."""
        ...

    def role_in(self, user: str, room: str) -> Role:
        """``user``'s role in ``room`` (``platform:room``) now."""
        ...

    def approvers(self, room: str) -> Collection[str] | None:
        """Who alone may approve in ``room``, or None: any operator there but the asker."""
        ...


class PendingWrites(Protocol):
    """Where a session holds its writes (see the module docstring). Every method is one atomic step."""

    async def hold(self, request: HoldRequest, /) -> HeldWrite:
        """Keep a write under a fresh code until ``request.ttl`` seconds from now, bound to the actor's room."""
        ...

    async def take(self, code: str, *, kind: HoldKind, actor: Actor) -> Decision:
        """Take ``code`` to run it now, as :func:`refusal` allows. Taken once, whatever the number of processes."""
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


def same_person(one: str, other: str, *, people: People | None = None) -> bool:
    """Whether two ids name the same person: the one place that says so (``people``: ``[bot.people]``, which says
    that ``local:alice`` and ``@alice:example.org`` are one person)."""
    return one == other or (people is not None and people.same(one, other))


def in_room(where: str, room: str) -> bool:
    """Whether ``where`` (an actor's ``platform:room``) is ``room`` (a request's): the same id, or a Slack channel
    named without its team (``slack:C1`` for ``slack:T1/C1``), as ``[bot] approvals_room`` names it."""
    if not room or ":" not in where:
        return False
    where, room = same_where(where), same_where(room)  # stored rows may hold the older form, irc:irc:#ops
    platform = where.partition(":")[0]
    return where == room or where_in(platform, room_of(where).rpartition("/")[2]) == room


def refusal(held: HeldWrite, *, step: Step, actor: Actor, now: float, authority: Authority) -> Refusal | None:
    """Why ``actor`` may not ``step`` the held write now (None: they may): the rules, written once."""
    mine = authority.same(held.asker, actor.id)
    if step == "cancel":
        # withdrawn where it was made (a terminal, or the chat room a request posted in the approvals room came from)
        where_asked = held.where == actor.where == "terminal" or in_room(actor.where, held.where)
        if not mine or (held.room and not where_asked and not in_room(actor.where, held.room)):
            return "not_yours"
    elif held.kind != ("confirm" if step == "confirm" else "approve"):
        return "kind"
    elif held.kind == "confirm" and (not mine or not in_room(actor.where, held.room)):
        return "not_yours"
    elif held.kind == "approve" and mine:
        return "own"
    elif held.kind == "approve":
        bound = _bound(held, step=step, actor=actor, authority=authority)
        if bound is not None:
            return bound
    if step != "cancel" and held.kind == "confirm" and not _may(authority, held.asker, held.room, Access.WRITE):
        return "asker_role"
    if held.state != "waiting":
        return "decided"
    if held.expires <= now:
        return "expired"
    return None


def _bound(held: HeldWrite, *, step: Step, actor: Actor, authority: Authority) -> Refusal | None:
    """A second person's decision: in the request's room, by an approver allowed there now, of an asker who may
    still write there under one of their names (a terminal's asker whom ``[bot.people]`` gives no other name was
    checked by the terminal's own policy)."""
    if not in_room(actor.where, held.room):
        return "elsewhere"
    names = authority.approvers(held.room)
    if names is not None and actor.id not in names:
        return "not_approver"
    if not _may(authority, actor.id, held.room, Access.APPROVE):
        return "approver_role"
    if step == "approve" and not _asker_may_write(held, authority):
        return "asker_role"
    return None


def _asker_may_write(held: HeldWrite, authority: Authority) -> bool:
    """Whether the asker may still write in the room they asked in (a terminal's asker: in the room the request is
    bound to, the approvals room)."""
    names = authority.names(held.asker)
    if held.where == "terminal" and len(names) == 1:
        return True
    where = held.room if held.where == "terminal" else held.where
    return any(_may(authority, name, where, Access.WRITE) for name in names)


def _may(authority: Authority, user: str, room: str, access: Access) -> bool:
    return Actor(id=user, role=authority.role_in(user, room), where=room).may(access)


def refusal_message(decision: Decision, *, code: str, prefix: str = "/") -> str:
    """The one line that says why ``code`` was not taken (never who else asked for what)."""
    shown, held = show(code.strip().upper(), 12), decision.write
    refused = decision.refusal
    if refused in ("unknown", "not_yours") or held is None:
        return f"nothing waits for code {shown}: a code works once, for the person it was given to"
    if refused == "own":
        return f"you asked for {held.what} yourself: someone else must approve it ({prefix}cancel {shown} drops it)"
    if refused == "kind" and held.kind == "approve":
        return f"code {shown} asks for approval: someone other than its asker answers {prefix}approve {shown}"
    if refused == "kind":
        return f"code {shown} is a confirmation: its asker answers {prefix}confirm {shown}"
    if refused == "expired":
        return f"code {shown} expired after {round(held.ttl)} s; nothing was sent: run the command again"
    if refused == "elsewhere":
        return f"code {shown} is decided only in the room where it was asked for (or posted); nothing was sent"
    if refused == "not_approver":
        return f"code {shown} may be approved only by the approvers this room names"
    if refused == "approver_role":
        return f"code {shown} needs an operator of its room to decide it; you are not one there now"
    if refused == "asker_role":
        return f"code {shown} was asked for by someone who may no longer write in its room; nothing was sent"
    if refused == "changed":
        return f"request {shown} was changed after it was shown; nothing was sent (ask for it again)"
    if refused == "other_key":
        return f"code {shown} was sealed by a bot with another approval key; nothing was sent (the bots need one key)"
    by = f" by {held.decided_by}" if held.decided_by and held.kind == "approve" else ""
    return f"code {shown} was already {_word(held)}{by}: a code works once"


def _word(held: HeldWrite) -> str:
    if held.state in ("approved", "done", "failed"):
        return "approved" if held.kind == "approve" else "confirmed"
    return {"expired": "closed (it expired)"}.get(held.state, held.state)
