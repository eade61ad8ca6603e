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

:meth:`AuditLog.recent` reads it back for ``/audit``: the last lines of one ``where`` (a chat room), newest
found first by reading the file from its end, as :class:`~bot_commands.results.AuditRecord` s that carry only the
fields named here (a field added later is not shown until it is named).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from petstore_os import Warn, open_private
from petstore_os.records import record

from .errors import CommandError
from .outcome import Outcome
from .policy import Actor
from .results import ApprovalNeeded, AuditRecord, Cancelled, ConfirmationNeeded, Denied, PetCreated, PetDetail
from .sanitize import visible

__all__ = ["AuditEntry", "AuditLog", "audit_entry", "read_recent"]

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


@record
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

    def recent(self, *, where: str, count: int) -> list[AuditRecord]:
        """The last ``count`` lines of ``where`` (oldest first); none when the file does not exist yet."""
        return read_recent(self.path, where=where, count=count)

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


#: The fields ``/audit`` shows beside who, what and how it went, by their name in the file -> their label: the
#: code of a held write (its ``pending`` line and the line closing it share it), who approved another's write,
#: the chat message a line is about, and why a write failed.
SHOWN_DETAILS = (
    ("pet_id", "pet"),
    ("replayed", "replayed"),
    ("pending_code", "code"),
    ("approver", "approver"),
    ("event_id", "event"),
    ("code", "error"),
    ("message", "message"),
)
_BLOCK = 64 * 1024


def read_recent(path: Path, *, where: str, count: int) -> list[AuditRecord]:
    """The last ``count`` audit lines of ``where`` in the file at ``path``, oldest first (lines that are not
    audit records, such as a torn last line, are skipped). Reads from the end, a block at a time."""
    found: list[AuditRecord] = []
    where = visible(where)  # as the writer wrote it
    needle = json.dumps(where, ensure_ascii=False).encode("utf-8")
    try:
        with path.open("rb") as handle:
            for raw in _lines_backwards(handle):
                record = _record(raw, where=where) if needle in raw else None  # most lines: no JSON to parse
                if record is not None:
                    found.append(record)
                    if len(found) >= count:
                        break
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise CommandError(f"cannot read the audit log {path}: {exc.strerror or exc}") from None
    found.reverse()
    return found


def _lines_backwards(handle: IO[bytes]) -> Iterator[bytes]:
    """The lines of a file opened in binary mode, last first."""
    end = handle.seek(0, os.SEEK_END)
    rest = b""
    while end > 0:
        start = max(0, end - _BLOCK)
        handle.seek(start)
        chunk = handle.read(end - start) + rest
        end = start
        lines = chunk.split(b"\n")
        rest = lines.pop(0)  # may be the tail of a line that starts in the block before
        yield from reversed(lines)
    yield rest


def _record(raw: bytes, *, where: str) -> AuditRecord | None:
    if not raw.strip():
        return None
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("where") != where:
        return None

    def text(key: str) -> str:
        value = data.get(key)
        return visible(value) if isinstance(value, str) else ""

    details = tuple(
        (label, visible(str(value)))
        for key, label in SHOWN_DETAILS
        if (value := data.get(key)) not in (None, "", False) and isinstance(value, str | int | bool)
    )
    return AuditRecord(
        time=text("time"),
        actor=text("actor"),
        role=text("role"),
        line=text("line"),
        outcome=text("outcome"),
        applied=text("applied"),
        details=details,
    )


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
