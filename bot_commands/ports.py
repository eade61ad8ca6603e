"""The command layer's ports to the outside: the client, a person asked to confirm, and the audit trail read back.

:class:`PetStoreAPI` is what the commands need from a client (``petstore_api``'s
``PetStoreClient`` is one; a test double could be another), and what faces may listen to: the
client's events (attempts, retries, each exchange; re-exported here, so a face that may not import the
client still names them). :class:`Confirm`
asks a person to confirm a write. :class:`AuditTrail` gives ``/audit`` the last audit lines of a room
(:class:`~bot_commands.audit.AuditLog` is one: the format is the command layer's own). :class:`Notifications` is a
chat bot's watches and schedules as one room and one person see them. Handlers see the session through
:class:`~bot_commands.context.CommandContext`; faces drive
:class:`~bot_commands.session.CommandSession` itself, built by their composition root.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from petstore_api.events import AttemptStarted, ClientEvent, EventHook, Exchange, Retrying
from petstore_api.models import CreatedPet, NewPet, PetPage, PetStatus, PetWithNotice
from petstore_os.records import record

from .every import Every
from .results import JSON, AuditRecord

if TYPE_CHECKING:  # pragma: no cover
    from .policy import Actor
    from .results import Result

__all__ = [
    "AskApproval",
    "AttemptStarted",
    "AuditTrail",
    "ClientEvent",
    "Confirm",
    "EventHook",
    "Exchange",
    "Notifications",
    "PetStoreAPI",
    "Retrying",
    "ScheduledCommand",
    "WriteRequest",
]


class PetStoreAPI(Protocol):
    """The operations the commands use."""

    async def list_pets(self, *, limit: int | None = None, status: PetStatus | str | None = None) -> PetPage: ...

    async def next_page(self, page: PetPage) -> PetPage | None: ...

    def iter_pages(
        self, *, limit: int | None = None, status: PetStatus | str | None = None
    ) -> AsyncGenerator[PetPage, None]: ...

    async def create_pet(
        self,
        pet: NewPet | None = None,
        *,
        name: str | None = None,
        category_id: int | None = None,
        status: PetStatus | str | None = None,
        idempotency_key: str | None = None,
    ) -> CreatedPet: ...

    async def get_pet(self, pet_id: int) -> PetWithNotice: ...

    async def list_orders(self) -> JSON: ...

    def set_api_key(self, api_key: str) -> None: ...

    def add_event_hook(self, hook: EventHook) -> None: ...

    def remove_event_hook(self, hook: EventHook) -> None: ...


class Confirm(Protocol):
    """Ask ``question`` (one line); True means yes. Ctrl-C, end of input or a closed dialog mean no."""

    async def __call__(self, question: str, /) -> bool: ...


class AuditTrail(Protocol):
    """The audit lines written so far, read back (a blocking read: callers run it on a thread)."""

    def recent(self, *, where: str, count: int) -> list[AuditRecord]:
        """The last ``count`` lines whose ``where`` is ``where`` (a chat room), oldest first."""
        ...


@record
class ScheduledCommand:
    """A schedule as the port gives it: its number, rhythm as typed, command, creator and next run (aware)."""

    id: int
    rhythm: str
    command: str
    creator: str
    next_run: datetime


class Notifications(Protocol):
    """The bot's watches and schedules, as one room and one person see them."""

    @property
    def interval(self) -> float:
        """Seconds between two looks for new pets (``[bot] watch_interval``)."""
        ...

    @property
    def timezone(self) -> str:
        """The time zone of schedules' times of day (``[bot] timezone``)."""
        ...

    async def watch(self, status: str) -> bool:
        """Announce new pets of ``status`` (``""``: every pet) here; False when that was already so; raises TooMany
        when the room or the bot watches the most it may."""
        ...

    async def unwatch(self, status: str) -> bool:
        """Stop announcing ``status`` here; False when it was not watched."""
        ...

    async def watches(self) -> list[str]:
        """The filters watched here (``""``: every pet)."""
        ...

    async def schedule(self, every: Every, command: str) -> ScheduledCommand:
        """Run ``command`` here as this person at the times ``every`` names; raises TooMany when the room or the bot
        has the most schedules it may."""
        ...

    async def schedules(self) -> list[ScheduledCommand]:
        """The schedules of this room."""
        ...

    async def unschedule(self, schedule_id: int) -> ScheduledCommand:
        """Drop schedule ``schedule_id`` of this room (its creator, or an admin of the room); raises NotScheduled."""
        ...


@record
class WriteRequest:
    """A write that needs a second person's approval: the line as typed (``$last`` expanded), what it does in
    words, every field it sends, who asks, and the command that runs with those fields."""

    line: str
    what: str
    fields: tuple[tuple[str, str], ...]
    actor: Actor
    #: The command that runs with ``fields`` (``add``).
    command: str = ""


class AskApproval(Protocol):
    """Ask a second person to approve ``request`` (a terminal's: a bot posts it in the approvals room) and give what
    running it came to; a denial, an expiry or a wait given up raise the command layer's errors."""

    async def __call__(self, request: WriteRequest, /) -> Result: ...
