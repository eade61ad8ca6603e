"""The audit trail: every write attempt, one JSON line, on disk before the result is reported.

A line: ``time`` (UTC, ISO 8601), ``actor`` (who asked for the write), ``role``, ``where``, ``line`` (the
command as run), ``outcome`` (``ok``, ``refused``, ``failed``, ``pending``, ``cancelled``, ``denied``,
``expired``), ``applied`` (``yes``, ``no``, or ``unknown`` when the answer was lost: the
write may have happened), ``code`` (the error's), ``message`` and ``pet_id`` when known,
``replayed: true`` when the service answered with the pet an earlier request
under the same Idempotency-Key created (nothing new: count one pet per pet_id), and from chat:
``event_id`` (the chat message the line is about), ``pending_code`` (the confirmation or approval code: the
``pending`` line and the line that closes it share it) and ``approver`` (who approved or denied another's write).
The file is private (mode 0600: created so, an older one tightened) and each line is flushed and fsynced.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from petstore_os import Warn, open_private

from .errors import CommandError
from .outcome import Outcome
from .policy import Actor
from .results import ApprovalNeeded, Cancelled, ConfirmationNeeded, Denied, PetCreated, PetDetail
from .sanitize import visible

__all__ = ["AuditEntry", "AuditLog", "audit_entry"]

_KEYS = (
    "actor",
    "role",
    "where",
    "line",
    "outcome",
    "applied",
    "code",
    "message",
    "pet_id",
    "event_id",
    "pending_code",
    "approver",
)


@dataclass(frozen=True, slots=True)
class AuditEntry:
    actor: str
    role: str
    where: str
    line: str
    outcome: str
    applied: str
    code: str = ""
    message: str = ""
    pet_id: int | None = None
    replayed: bool = False
    event_id: str = ""
    pending_code: str = ""
    approver: str = ""

    def to_json(self, *, now: datetime) -> str:
        record: dict[str, object] = {"time": now.isoformat(timespec="milliseconds")}
        for key in _KEYS:
            value = getattr(self, key)
            if value not in ("", None):
                record[key] = visible(value) if isinstance(value, str) else value
        if self.replayed:
            record["replayed"] = True
        return json.dumps(record, ensure_ascii=False)


class AuditLog:
    """Appends entries to ``path``; safe to share between sessions (one lock, one file)."""

    def __init__(self, path: Path, *, warn: Warn | None = None) -> None:
        self.path = path
        self._warn = warn
        self._lock = threading.Lock()
        self._file: IO[str] | None = None

    def open(self) -> AuditLog:
        """Open (create, mode 0600; an older file tightened) now, so a bad path fails at start-up, not at the
        first write."""
        if self._file is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = open_private(self.path, warn=self._warn)
                self._file = os.fdopen(fd, "a", encoding="utf-8")
            except OSError as exc:
                raise CommandError(f"cannot open the audit log {self.path}: {exc.strerror or exc}") from None
        return self

    def write(self, entry: AuditEntry) -> None:
        """Append one line and make it durable; raises CommandError when the disk refuses."""
        line = entry.to_json(now=datetime.now(UTC)) + "\n"
        with self._lock:
            handle = self.open()._file
            assert handle is not None
            try:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
            except OSError as exc:
                raise CommandError(f"cannot write the audit log {self.path}: {exc.strerror or exc}") from None

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


#: Outcomes of writes that held or dropped them rather than sending anything.
_HELD: dict[type, str] = {
    ConfirmationNeeded: "pending",
    ApprovalNeeded: "pending",
    Cancelled: "cancelled",
    Denied: "denied",
}


def audit_entry(actor: Actor, line: str, outcome: Outcome) -> AuditEntry:
    """The audit line of ``outcome``, run by ``actor`` as ``line``."""
    failure, result = outcome.failure, outcome.result
    pet_id = result.pet.id if isinstance(result, (PetCreated, PetDetail)) else None
    if failure is None:
        held = _HELD.get(type(result), "")
        return AuditEntry(
            actor=actor.id,
            role=str(actor.role),
            where=actor.where,
            line=line,
            outcome=held or "ok",
            applied="no" if held else "yes",
            pet_id=pet_id,
            replayed=isinstance(result, PetCreated) and result.replayed,
        )
    refused = failure.exit_code == 2
    applied = "no" if failure.wrote_nothing else "unknown"
    message = failure.message if applied == "no" else f"{failure.message} (the answer was lost: it may have been done)"
    return AuditEntry(
        actor=actor.id,
        role=str(actor.role),
        where=actor.where,
        line=line,
        outcome="refused" if refused else "failed",
        applied=applied,
        code=failure.code,
        message=message,
    )
