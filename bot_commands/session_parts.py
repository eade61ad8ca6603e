"""What a :class:`~bot_commands.session.CommandSession` is built from, whole: the service it talks to, who it acts
for under which rules, and what its face lends it (how it asks, waits, shows progress, reaches a room, sends a write
for approval). Every face passes all of it at construction; nothing is patched on a session afterwards, and the few
changes a session's life has (a chat person's role between two messages, a new API key) go through its methods.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from petstore_os.records import record

from .audit import AuditLog
from .pending import PendingWrites
from .policy import Actor, Policy
from .ports import AskApproval, Confirm, Notifications, PetStoreAPI
from .registry import Registry
from .results import EnvInfo

__all__ = ["DEFAULT_CONSENT_HINT", "SessionParts", "Sleep"]

#: How a session pauses (``/sleep``, a retry's backoff): ``asyncio.sleep`` or a face's own.
Sleep = Callable[[float], Awaitable[object]]
#: How consent is given where there is no one to ask, named in a refusal on production (``petstore run``'s).
DEFAULT_CONSENT_HINT = "petstore run needs --yes"


@record(kw_only=True)
class SessionParts:
    """Everything a session is built with (see the module docstring); ``actor`` and ``policy`` are settled (the
    session's constructor gives the defaults: the local person, the environment's rules).

    ``confirm``: asks the person at the terminal (None: no one to ask; ``consent_hint`` says how to consent).
    ``pending``: where writes are held for ``/confirm`` and ``/approve`` (the bots' store; None: nothing is held),
    for ``confirm_ttl`` and ``approval_ttl`` seconds. ``notifications``: a chat bot's watches and schedules for the
    session's room and person (None: ``/watch`` says chat only). ``ask_approval``: writes go to a second person
    instead of running here (a terminal on an environment under ``[bot] approvals``). ``progress``: told how long
    work is going (``--all``: pages and pets so far). ``max_history``: commands kept (a long-lived chat session).
    """

    client: PetStoreAPI
    env: EnvInfo
    registry: Registry
    actor: Actor
    policy: Policy
    confirm: Confirm | None = None
    audit: AuditLog | None = None
    pending: PendingWrites | None = None
    confirm_ttl: float = 60.0
    approval_ttl: float = 3600.0
    sleep: Sleep = asyncio.sleep
    clock: Callable[[], float] = time.monotonic
    max_history: int | None = None
    notifications: Notifications | None = None
    ask_approval: AskApproval | None = None
    progress: Callable[[str], None] | None = None
    consent_hint: str = DEFAULT_CONSENT_HINT
