"""What a command's handler may use of the session running it.

Handlers take a :class:`CommandContext`, not the concrete
:class:`~bot_commands.session.CommandSession` (which is one): the client port, where the session points and who
runs it, a few pieces of the conversation (the last page listed, the previous outcome), and the session's services
(progress, first-time notices, the Idempotency-Key of the request, help, history, held writes: confirmations
and approvals, the audit trail, a chat bot's watches and schedules).
"""

from __future__ import annotations

from collections.abc import Awaitable
from pathlib import Path
from typing import Protocol

from .errors import Failure
from .policy import Access, Actor, Policy
from .ports import AuditTrail, Notifications, PetStoreAPI
from .results import Denied, EnvInfo, Help, HistoryScript, PetList, Result

__all__ = ["CommandContext", "PreviousOutcome"]


class PreviousOutcome(Protocol):
    """What ``/expect`` checks of the line before it (an :class:`~bot_commands.outcome.Outcome` is one)."""

    @property
    def line(self) -> str: ...

    @property
    def result(self) -> Result | None: ...

    @property
    def failure(self) -> Failure | None: ...


class CommandContext(Protocol):
    """The session as its handlers see it."""

    @property
    def client(self) -> PetStoreAPI: ...

    @property
    def env(self) -> EnvInfo: ...

    @property
    def actor(self) -> Actor: ...

    @property
    def policy(self) -> Policy: ...

    @property
    def audit_trail(self) -> AuditTrail | None:
        """Where ``/audit`` reads the audit lines back; None when this face keeps no audit."""
        ...

    @property
    def last_list(self) -> PetList | None:
        """The most recent page of ``/list`` or ``/more``: ``/more`` continues from it."""
        ...

    @property
    def last_outcome(self) -> PreviousOutcome | None: ...

    def report(self, text: str) -> None:
        """Progress of the running command (``--all``: pages and pets so far), for a face that shows it."""
        ...

    def first_notice(self, key: str) -> bool:
        """True the first time ``key`` is noticed in this session."""
        ...

    def idempotency_key(self) -> str | None:
        """The Idempotency-Key for a write of the current request, or None (the client makes a fresh one)."""
        ...

    def sleep(self, seconds: float, /) -> Awaitable[object]: ...

    def help(self, topic: str | None = None) -> Help:
        """Help on the commands the actor may run, or on one (raises UsageError for an unknown one)."""
        ...

    def history_script_lines(self) -> list[str]: ...

    def history_file(self, name: str) -> HistoryScript:
        """The session as a script for the face to hand over as ``name``; nothing is written."""
        ...

    def save_history(self, path: str | Path) -> int:
        """Write the session as a script at ``path``; returns the number of commands (raises CommandError)."""
        ...

    async def confirm_pending(self, code: str) -> Result:
        """Run the write waiting for ``code``."""
        ...

    async def cancel_pending(self, code: str) -> str:
        """Drop the write waiting for ``code``; returns what it would have done."""
        ...

    async def approve_pending(self, code: str) -> Result:
        """Run another person's write waiting for approval under ``code``."""
        ...

    async def deny_pending(self, code: str, reason: str = "") -> Denied:
        """Drop another person's write waiting for approval under ``code``."""
        ...

    @property
    def notifications(self) -> Notifications | None:
        """The chat bot's watches and schedules for this room and person; None on faces without them."""
        ...

    def access_of(self, line: str) -> tuple[str, Access]:
        """The name and access of the command ``line`` would run, without running it (raises UsageError)."""
        ...
