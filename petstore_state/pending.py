"""Writes waiting for a person: confirmations (``!confirm CODE`` by the asker) and approvals (``!approve CODE`` by
someone else), one table, shared by every bot process and the terminal faces.

A row is created ``waiting`` and leaves that state exactly once, by one atomic ``UPDATE ... WHERE state = 'waiting'
... RETURNING``: two processes trying the same code cannot both win, so a write runs once. The states::

    waiting --confirm/approve--> approved --finish--> done | failed
    waiting --cancel--> cancelled      waiting --deny--> denied      waiting --(expires)--> expired

What runs is ``command`` with ``fields`` (``line`` is how it was typed, for people and the audit); a row never
holds code or pickles. ``room`` is where it is decided (set when it is made in a chat room, or when a bot posts a
terminal's request in the approvals room: :meth:`PendingStore.bind`), ``seal`` what the bots sealed it with. Times
are seconds since the epoch (``time.time()``): several hosts compare them. ``posted`` says whether a bot has shown a
request made at a terminal in the approvals room.

This module holds no rules of who may decide what: :meth:`PendingStore.transition` runs the caller's ``check`` on
the row inside the transaction that moves it, so a check and its move are one step.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from .db import Database, Transaction
from .identity import ensure_terminal_identity
from .lease import Fence, fenced

__all__ = [
    "CODE_ALPHABET",
    "Kind",
    "PendingStore",
    "PendingWrite",
    "State",
    "TakeResult",
]

Kind = Literal["confirm", "approve"]
State = Literal["waiting", "approved", "denied", "expired", "done", "cancelled", "failed"]
#: Codes: no 0/O or 1/I to misread.
CODE_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
#: Characters of a code: a confirmation is typed by its asker soon after; an approval may be typed in another room
#: hours later, by someone else, so it is harder to guess.
CODE_LENGTH: dict[Kind, int] = {"confirm": 4, "approve": 6}
FINAL_STATES: tuple[State, ...] = ("denied", "expired", "done", "cancelled", "failed")

_COLUMNS = (
    "code, kind, asker, role, location, line, what, fields, env, created, expires, state, decided_by, decided, "
    "reason, event_id, result, posted, command, room, seal"
)
#: Version 2: what runs (``command``), where it is decided (``room``) and the bots' ``seal``. A row made before has
#: none of them, so it is never run; it expires.
_ADDED = [
    "ALTER TABLE pending_writes ADD COLUMN command TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE pending_writes ADD COLUMN room TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE pending_writes ADD COLUMN seal TEXT NOT NULL DEFAULT ''",
]
_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS pending_writes (
        code TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        asker TEXT NOT NULL,
        role TEXT NOT NULL,
        location TEXT NOT NULL,
        line TEXT NOT NULL,
        what TEXT NOT NULL,
        fields TEXT NOT NULL,
        env TEXT NOT NULL,
        created DOUBLE PRECISION NOT NULL,
        expires DOUBLE PRECISION NOT NULL,
        state TEXT NOT NULL,
        decided_by TEXT NOT NULL DEFAULT '',
        decided DOUBLE PRECISION,
        reason TEXT NOT NULL DEFAULT '',
        event_id TEXT NOT NULL DEFAULT '',
        result TEXT NOT NULL DEFAULT '',
        posted BIGINT NOT NULL DEFAULT 0
    )""",
    "CREATE INDEX IF NOT EXISTS pending_writes_waiting ON pending_writes (state, expires)",
]


@dataclass(frozen=True, slots=True)
class PendingWrite:
    """One write waiting for (or past) a person's decision; see the module docstring."""

    code: str
    kind: Kind
    #: Who asked (a chat user id, or ``local:<login>`` at a terminal), and their role then.
    asker: str
    role: str
    #: Where it was asked: ``platform:room`` (``matrix:!abc:example.org``) or ``terminal``.
    where: str
    #: The command as it was typed, ``$last`` expanded (for people and the audit; what runs is command + fields).
    line: str
    #: What it does, in words (``add pet 'Rex'``).
    what: str
    #: Every field the write sends, by its API name, in full, in order.
    fields: tuple[tuple[str, str], ...]
    #: The environment it writes to (``production``).
    env: str
    created: float
    expires: float
    state: State
    #: Who confirmed, approved, denied or cancelled it; when; and the reason a denial gave.
    decided_by: str = ""
    decided: float | None = None
    reason: str = ""
    #: The chat event id of the message that asked for it (empty at a terminal).
    event_id: str = ""
    #: What running it said (the reply's text, or the failure), for a terminal waiting on it.
    result: str = ""
    #: A bot has posted this request in the approvals room.
    posted: bool = False
    #: The command it runs (``add``), with ``fields``.
    command: str = ""
    #: Where it is decided (``platform:room``); empty until a bot binds a terminal's request to its approvals room.
    room: str = ""
    #: The bots' seal over what was shown (empty: not sealed).
    seal: str = ""

    @property
    def waiting(self) -> bool:
        return self.state == "waiting"


@dataclass(frozen=True, slots=True)
class TakeResult:
    """What :meth:`PendingStore.transition` got: the row, and why it did not move (``unknown``: no such code;
    ``decided``: another process moved it first; else what the caller's check said)."""

    write: PendingWrite | None
    refusal: str | None = None

    @property
    def taken(self) -> bool:
        return self.refusal is None and self.write is not None


class PendingStore:
    """The ``pending_writes`` table of a state :class:`~petstore_state.db.Database` (see the module docstring).

    ``clock`` gives seconds since the epoch (tests pass their own).
    """

    def __init__(self, database: Database, *, clock: Callable[[], float] = time.time) -> None:
        self.database = database
        self.clock = clock
        database.ensure_schema("pending", _SCHEMA, upgrades=[_ADDED])
        ensure_terminal_identity(database)

    async def create(
        self,
        *,
        kind: Kind,
        asker: str,
        role: str,
        where: str,
        line: str,
        what: str,
        fields: Sequence[tuple[str, str]] = (),
        env: str,
        ttl: float,
        event_id: str = "",
        command: str = "",
        room: str = "",
        seal: Callable[[PendingWrite], str] | None = None,
    ) -> PendingWrite:
        """A new ``waiting`` row with a fresh code (unique among all rows), expiring ``ttl`` seconds from now, to be
        decided in ``room``; ``seal`` (given the row made) gives its seal, stored in the same transaction."""
        now = self.clock()
        values = (kind, asker, role, where, line, what, json.dumps([list(f) for f in fields]), env, now, now + ttl)

        def insert(tx: Transaction) -> PendingWrite:
            while True:
                code = new_code(kind)
                row = tx.one(
                    f"INSERT INTO pending_writes (code, kind, asker, role, location, line, what, fields, env, "
                    f"created, expires, state, event_id, command, room) "
                    f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'waiting', ?, ?, ?) "
                    f"ON CONFLICT (code) DO NOTHING RETURNING {_COLUMNS}",
                    (code, *values, event_id, command, room),
                )
                if row is not None:
                    break
            made = _write(row)
            if seal is None:
                return made
            sealed = tx.one(
                f"UPDATE pending_writes SET seal = ? WHERE code = ? RETURNING {_COLUMNS}", (seal(made), made.code)
            )
            assert sealed is not None
            return _write(sealed)

        return await self.database.run(insert)

    async def get(self, code: str) -> PendingWrite | None:
        key = normal_code(code)
        row = await self.database.run(
            lambda tx: tx.one(f"SELECT {_COLUMNS} FROM pending_writes WHERE code = ?", (key,))
        )
        return None if row is None else _write(row)

    def get_sync(self, code: str) -> PendingWrite | None:
        """:meth:`get` for a terminal without an event loop."""
        key = normal_code(code)
        row = self.database.run_sync(lambda tx: tx.one(f"SELECT {_COLUMNS} FROM pending_writes WHERE code = ?", (key,)))
        return None if row is None else _write(row)

    async def transition(
        self, code: str, *, check: Callable[[PendingWrite], str | None], to: State, by: str, reason: str = ""
    ) -> TakeResult:
        """Move ``code`` from ``waiting`` to ``to`` (``approved``, ``denied`` or ``cancelled``) for ``by``, once,
        unless ``check`` (given the row, inside the same transaction) says why not. The caller of an ``approved``
        one then runs it and calls :meth:`finish`."""
        key = normal_code(code)
        now = self.clock()

        def move(tx: Transaction) -> TakeResult:
            row = tx.one(f"SELECT {_COLUMNS} FROM pending_writes WHERE code = ?", (key,))
            if row is None:
                return TakeResult(None, "unknown")
            found = _write(row)
            refusal = check(found)
            if refusal is not None:
                return TakeResult(found, refusal)
            taken = tx.one(
                f"UPDATE pending_writes SET state = ?, decided_by = ?, decided = ?, reason = ? "
                f"WHERE code = ? AND state = 'waiting' AND expires > ? RETURNING {_COLUMNS}",
                (to, by, now, reason, key, now),
            )
            if taken is None:  # another process decided it between the SELECT and the UPDATE
                again = tx.one(f"SELECT {_COLUMNS} FROM pending_writes WHERE code = ?", (key,))
                return TakeResult(_write(again) if again else found, "decided")
            return TakeResult(_write(taken))

        return await self.database.run(move)

    async def bind(self, code: str, *, room: str, seal: Callable[[PendingWrite], str]) -> PendingWrite | None:
        """Bind a waiting request not bound yet (a terminal's) to ``room``, sealed by ``seal`` (given the row as
        bound), in one transaction; None when it was bound already or is no longer waiting."""
        key = normal_code(code)

        def bind(tx: Transaction) -> PendingWrite | None:
            row = tx.one(
                f"UPDATE pending_writes SET room = ? WHERE code = ? AND state = 'waiting' AND room = '' "
                f"RETURNING {_COLUMNS}",
                (room, key),
            )
            if row is None:
                return None
            bound = _write(row)
            sealed = tx.one(
                f"UPDATE pending_writes SET seal = ? WHERE code = ? RETURNING {_COLUMNS}", (seal(bound), key)
            )
            return None if sealed is None else _write(sealed)

        return await self.database.run(bind)

    async def taken(self) -> list[PendingWrite]:
        """Rows taken (``approved``) and never finished, oldest first: a process stopped while running them."""
        rows = await self.database.run(
            lambda tx: tx.all(f"SELECT {_COLUMNS} FROM pending_writes WHERE state = 'approved' ORDER BY decided")
        )
        return [_write(row) for row in rows]

    async def finish(self, code: str, *, ok: bool, result: str) -> PendingWrite | None:
        """Record how the run of a taken (``approved``) write ended: ``done`` or ``failed``, with what it said."""
        state = "done" if ok else "failed"
        key = normal_code(code)
        row = await self.database.run(
            lambda tx: tx.one(
                f"UPDATE pending_writes SET state = ?, result = ? WHERE code = ? AND state = 'approved' "
                f"RETURNING {_COLUMNS}",
                (state, result, key),
            )
        )
        return None if row is None else _write(row)

    async def expire_due(self) -> list[PendingWrite]:
        """Close every ``waiting`` row past its expiry (state ``expired``) and return them: each is returned to one
        caller only, which closes it in the audit."""
        now = self.clock()
        rows = await self.database.run(
            lambda tx: tx.all(
                f"UPDATE pending_writes SET state = 'expired', decided = ? WHERE state = 'waiting' AND expires <= ? "
                f"RETURNING {_COLUMNS}",
                (now, now),
            )
        )
        return sorted((_write(row) for row in rows), key=lambda w: w.expires)

    async def unposted(self, *, kind: Kind = "approve", limit: int = 50) -> list[PendingWrite]:
        """Waiting requests of ``kind`` no bot has posted yet, oldest first (requests made at a terminal)."""
        rows = await self.database.run(
            lambda tx: tx.all(
                f"SELECT {_COLUMNS} FROM pending_writes WHERE kind = ? AND state = 'waiting' AND posted = 0 "
                f"AND expires > ? ORDER BY created LIMIT ?",
                (kind, self.clock(), limit),
            )
        )
        return [_write(row) for row in rows]

    async def claim_taken(self, write: PendingWrite, *, fence: Fence | None = None) -> bool:
        """Claim the finishing of ``write``, left ``approved`` (True for one caller only: finish it then), checking
        ``fence`` (the lease's) in the same transaction: its ``decided`` moves from the value read to now, so a
        finisher started before now passes it over."""
        guard, params = fenced(fence)
        changed = await self.database.run(
            lambda tx: tx.execute(
                "UPDATE pending_writes SET decided = ? WHERE code = ? AND state = 'approved' AND decided = ?" + guard,
                (self.clock(), write.code, write.decided, *params),
            )
        )
        return changed == 1

    async def mark_posted(self, code: str, *, fence: Fence | None = None) -> bool:
        """Claim the posting of ``code`` (True for one caller only: post it then), checking ``fence`` (the lease's)
        in the same transaction."""
        key = normal_code(code)
        guard, params = fenced(fence)
        changed = await self.database.run(
            lambda tx: tx.execute(
                "UPDATE pending_writes SET posted = 1 WHERE code = ? AND posted = 0" + guard, (key, *params)
            )
        )
        return changed == 1

    async def recent(
        self, *, states: Sequence[State] = (), kind: Kind | None = None, limit: int = 50
    ) -> list[PendingWrite]:
        """The newest rows first, of ``states`` (all when empty) and ``kind`` (both when None)."""
        return await self.database.run(lambda tx: _recent(tx, states=states, kind=kind, limit=limit))

    def recent_sync(
        self, *, states: Sequence[State] = (), kind: Kind | None = None, limit: int = 50
    ) -> list[PendingWrite]:
        """:meth:`recent` for a terminal without an event loop."""
        return self.database.run_sync(lambda tx: _recent(tx, states=states, kind=kind, limit=limit))

    async def purge(self, *, older_than: float) -> int:
        """Delete finished rows decided (or created) more than ``older_than`` seconds ago; returns how many."""
        cutoff = self.clock() - older_than
        finals = ", ".join("?" for _ in FINAL_STATES)
        return await self.database.run(
            lambda tx: tx.execute(
                f"DELETE FROM pending_writes WHERE state IN ({finals}) AND COALESCE(decided, created) < ?",
                (*FINAL_STATES, cutoff),
            )
        )


def new_code(kind: Kind) -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH[kind]))


def normal_code(code: str) -> str:
    """A code as typed (``vwzb``, `` VWZB ``) as stored."""
    return code.strip().upper()


def _recent(tx: Transaction, *, states: Sequence[State], kind: Kind | None, limit: int) -> list[PendingWrite]:
    where, params = [], list[object]()
    if states:
        where.append(f"state IN ({', '.join('?' for _ in states)})")
        params.extend(states)
    if kind is not None:
        where.append("kind = ?")
        params.append(kind)
    clause = f" WHERE {' AND '.join(where)}" if where else ""
    rows = tx.all(f"SELECT {_COLUMNS} FROM pending_writes{clause} ORDER BY created DESC LIMIT ?", (*params, limit))
    return [_write(row) for row in rows]


def _write(row: tuple[object, ...]) -> PendingWrite:
    (code, kind, asker, role, where, line, what, fields, env, created, expires, state, decided_by, decided, reason,
     event_id, result, posted, command, room, seal) = row  # fmt: skip
    pairs = json.loads(str(fields))
    return PendingWrite(
        code=str(code),
        kind="approve" if kind == "approve" else "confirm",
        asker=str(asker),
        role=str(role),
        where=str(where),
        line=str(line),
        what=str(what),
        fields=tuple((str(name), str(value)) for name, value in pairs),
        env=str(env),
        created=float(created),  # type: ignore[arg-type]
        expires=float(expires),  # type: ignore[arg-type]
        state=str(state),  # type: ignore[arg-type]
        decided_by=str(decided_by or ""),
        decided=None if decided is None else float(decided),  # type: ignore[arg-type]
        reason=str(reason or ""),
        event_id=str(event_id or ""),
        result=str(result or ""),
        posted=bool(posted),
        command=str(command or ""),
        room=str(room or ""),
        seal=str(seal or ""),
    )
