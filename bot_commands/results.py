"""Typed results of commands. Faces render these; commands never format text.

Every result has ``to_json()``: for results that came from the service it is
the response body exactly as the service sent it (``petstore run --json``
prints it as ``result``); for local results it is a small JSON object.
"""

from __future__ import annotations

from typing import TypeAlias

from petstore_api.models import DeprecationNotice, Pet
from petstore_os.records import field, record

#: A JSON value (what ``json.loads`` gives and ``json.dumps`` takes).
JSON: TypeAlias = dict[str, "JSON"] | list["JSON"] | str | int | float | bool | None

__all__ = [
    "JSON",
    "ApprovalNeeded",
    "ApprovalRequested",
    "ApprovalRequests",
    "Cancelled",
    "AuditListing",
    "AuditRecord",
    "ConfirmationNeeded",
    "Denied",
    "EnvInfo",
    "ExpectationMet",
    "Help",
    "HelpEntry",
    "HistoryListing",
    "HistoryScript",
    "Notice",
    "OrdersListing",
    "Paused",
    "Pet",
    "PetCreated",
    "PetDetail",
    "PetList",
    "Quit",
    "Result",
    "ScheduleList",
    "ScheduleRow",
    "WatchList",
    "WhoAmI",
]


@record
class Result:
    """Base of all command results."""

    def to_json(self) -> JSON:  # pragma: no cover - overridden
        return None


@record
class PetList(Result):
    """``/list``: one page (or, with ``--all``, every page joined); ``/more``: the next page (``continued``).

    ``truncated``: ``--all`` stopped at its page guard with more pages to follow.
    """

    pets: list[Pet]
    status: str | None = None
    limit: int | None = None
    next_url: str | None = None
    pages: int = 1
    raw: list[JSON] = field(default_factory=list)
    continued: bool = False
    truncated: bool = False

    def to_json(self) -> JSON:
        return self.raw


@record
class PetCreated(Result):
    """``/add``: the pet the service created (with its assigned id).

    ``replayed``: the service answered with the pet an earlier delivery of this same request created (the same
    Idempotency-Key: a chat message handled twice, a retried call); nothing new was created.
    """

    pet: Pet
    raw: dict[str, JSON] = field(default_factory=dict)
    replayed: bool = False

    def to_json(self) -> JSON:
        return self.raw


@record
class PetDetail(Result):
    """``/get``: one pet, and the deprecation notice of getPet.

    ``first_notice`` is True the first time in a session, so faces say it once.
    """

    pet: Pet
    notice: DeprecationNotice
    first_notice: bool = False
    raw: dict[str, JSON] = field(default_factory=dict)

    def to_json(self) -> JSON:
        return self.raw


@record
class OrdersListing(Result):
    """``/orders``: the payload is not specified, so it is kept as plain JSON."""

    data: JSON = None

    def to_json(self) -> JSON:
        return self.data


@record
class EnvInfo(Result):
    """``/env``: where the session points. ``masked_key`` is never the key."""

    env: str
    base_url: str
    masked_key: str
    sandbox: bool = False
    read_only: bool = False

    def to_json(self) -> JSON:
        return {
            "env": self.env,
            "base_url": self.base_url,
            "api_key": self.masked_key,
            "sandbox": self.sandbox,
            "read_only": self.read_only,
        }


@record
class HelpEntry:
    name: str
    aliases: tuple[str, ...]
    usage: str
    summary: str
    details: str = ""


@record
class Help(Result):
    """``/help [COMMAND]``: entries derived from the registry."""

    entries: tuple[HelpEntry, ...]
    topic: str | None = None

    def to_json(self) -> JSON:
        return [{"name": e.name, "usage": e.usage, "summary": e.summary} for e in self.entries]


@record
class Notice(Result):
    """A local message (``/sleep``, ``/history save``, expectations met ...)."""

    text: str
    level: str = "info"  # info | warning

    def to_json(self) -> JSON:
        return {"notice": self.text}


@record
class Quit(Result):
    """``/quit``: the face should end the session."""

    def to_json(self) -> JSON:
        return {"quit": True}


# --- Added by the command layer (scripted demos, issue 6) -------------------


@record
class Paused(Result):
    """``/sleep SECONDS``: the session paused (faces show nothing)."""

    seconds: float

    def to_json(self) -> JSON:
        return {"slept": self.seconds}


@record
class ExpectationMet(Result):
    """``/expect ...`` held for the previous command (``previous`` is its line)."""

    expectation: str
    previous: str = ""

    def to_json(self) -> JSON:
        return {"expect": self.expectation, "met": True}


@record
class HistoryListing(Result):
    """``/history``: the commands of this session, as a replayable script."""

    lines: tuple[str, ...]

    def to_json(self) -> JSON:
        return {"history": list(self.lines)}


@record
class HistoryScript(Result):
    """``/history save NAME`` where the face may not touch the host's files: the script (``text``, ``count``
    commands) for the face to hand over as a file called ``name``; nothing was written."""

    name: str
    text: str
    count: int

    def to_json(self) -> JSON:
        return {"file": self.name, "commands": self.count, "written": False}


@record
class WhoAmI(Result):
    """``/whoami``: the actor of this session, its role, and the commands it may run."""

    actor: str
    role: str
    where: str
    commands: tuple[str, ...] = ()

    def to_json(self) -> JSON:
        return {"actor": self.actor, "role": self.role, "where": self.where, "commands": list(self.commands)}


@record
class ConfirmationNeeded(Result):
    """A write waits for ``/confirm CODE`` from the same person within ``ttl`` seconds."""

    code: str
    what: str
    line: str
    ttl: int
    #: What the write does, in the command's own words (``add a pet``), for a confirmation showing ``fields``.
    action: str = ""
    #: Every field the write sends, by its API name, in full (``("name", "Rex")``); empty for other commands.
    fields: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> JSON:
        shown: dict[str, JSON] = {"confirm": self.code, "what": self.what, "expires_in": self.ttl}
        if self.fields:
            shown["fields"] = dict[str, JSON](self.fields)
        return shown


@record
class ApprovalNeeded(Result):
    """A write on an environment whose writes need a second person waits for ``/approve CODE`` (or ``/deny``)
    from someone other than ``asker`` within ``ttl`` seconds."""

    code: str
    what: str
    line: str
    ttl: int
    asker: str
    env: str
    #: What the write does, in the command's own words (``add a pet``).
    action: str = ""
    #: Every field the write sends, by its API name, in full: the approver sees all of it.
    fields: tuple[tuple[str, str], ...] = ()
    #: Where it is decided when that is not where it was asked (``platform:room``: the approvals room it was posted
    #: in, ``[bot] approvals_room``); "": here.
    room: str = ""

    def to_json(self) -> JSON:
        shown: dict[str, JSON] = {
            "approve": self.code,
            "what": self.what,
            "asker": self.asker,
            "env": self.env,
            "expires_in": self.ttl,
        }
        if self.fields:
            shown["fields"] = dict[str, JSON](self.fields)
        if self.room:
            shown["decided_in"] = self.room
        return shown


@record
class Denied(Result):
    """A request for approval was dropped by ``by`` (``/deny CODE [REASON]``); nothing was sent."""

    code: str
    what: str
    asker: str
    by: str
    reason: str = ""

    def to_json(self) -> JSON:
        shown: dict[str, JSON] = {"denied": self.code, "what": self.what, "asker": self.asker, "by": self.by}
        if self.reason:
            shown["reason"] = self.reason
        return shown


@record
class Cancelled(Result):
    """A write that waited for confirmation was dropped by the person asked (``/cancel CODE``)."""

    code: str
    what: str

    def to_json(self) -> JSON:
        return {"cancelled": self.code, "what": self.what}


@record
class AuditRecord:
    """One line of the audit trail as ``/audit`` shows it: who did what, when, and how it went.

    ``details``: the line's other known fields that are set (``pet``, ``code``, ``event``, ``approver``...),
    in the order they are shown."""

    time: str
    actor: str
    role: str
    line: str
    outcome: str
    applied: str = ""
    details: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict[str, JSON]:
        shown: dict[str, JSON] = {"time": self.time, "actor": self.actor, "role": self.role, "line": self.line}
        shown["outcome"] = self.outcome
        if self.applied:
            shown["applied"] = self.applied
        shown.update(self.details)
        return shown


@record
class AuditListing(Result):
    """``/audit [N]``: the last N audit lines of ``where`` (a chat room), oldest first."""

    where: str
    records: tuple[AuditRecord, ...]

    def to_json(self) -> JSON:
        return {"where": self.where, "records": [record.to_json() for record in self.records]}


@record
class WatchList(Result):
    """``/watch``, ``/unwatch``, ``/watches``: what was done (``text``, empty for a listing) and what the room
    watches now (``""``: every new pet)."""

    statuses: tuple[str, ...]
    text: str = ""

    def to_json(self) -> JSON:
        return {"watches": [status or "all" for status in self.statuses], "notice": self.text}


@record
class ScheduleRow:
    """One schedule as listed: number, rhythm as typed, command, who set it up, next run (ISO 8601, local)."""

    id: int
    rhythm: str
    command: str
    creator: str
    next_run: str

    def to_json(self) -> JSON:
        return {"id": self.id, "every": self.rhythm, "command": self.command, "by": self.creator, "next": self.next_run}


@record
class ScheduleList(Result):
    """``/every`` (the schedule made, said in ``text``), ``/schedules`` (the room's); times in ``timezone``."""

    rows: tuple[ScheduleRow, ...]
    timezone: str
    text: str = ""

    def to_json(self) -> JSON:
        return {"schedules": [row.to_json() for row in self.rows], "timezone": self.timezone, "notice": self.text}


@record
class ApprovalRequested(Result):
    """A write sent to a second person for approval, not waited for (``--no-wait``): its request ``code``."""

    code: str
    what: str
    expires_in: int
    room: str = ""

    def to_json(self) -> JSON:
        return {"id": self.code, "what": self.what, "state": "waiting", "expires_in": self.expires_in}


@record
class ApprovalRequests(Result):
    """``petstore approvals``: requests for approval as records (``id``, ``asker``, ``what``, ``state``, ``age``
    seconds, and more); ``detail``: one request shown whole (``petstore approvals show ID``)."""

    records: tuple[dict[str, JSON], ...]
    detail: bool = False

    def to_json(self) -> JSON:
        if self.detail and self.records:
            return self.records[0]
        return list(self.records)
