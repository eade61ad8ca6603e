"""The audit log read back (``AuditLog.recent``, the ``/audit`` port): one room's last lines, from the file's end."""

from __future__ import annotations

import json
from pathlib import Path

from bot_commands.audit import AuditEntry, AuditLog, read_recent

ROOM, OTHER = "matrix:!a:t", "matrix:!b:t"


def entry(where: str, line: str, *, pet_id: int | None = None) -> AuditEntry:
    return AuditEntry(
        actor="@ann:t", role="operator", where=where, line=line, outcome="ok", applied="yes", pet_id=pet_id
    )


def test_the_last_lines_of_one_room_oldest_first(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.ndjson")
    for n in range(30):
        log.write(entry(ROOM if n % 3 else OTHER, f"/add pet{n} --category 1", pet_id=n))
    log.close()
    shown = log.recent(where=ROOM, count=4)
    assert [r.line for r in shown] == [f"/add pet{n} --category 1" for n in (25, 26, 28, 29)]
    assert shown[-1].details == (("pet", "29"),) and shown[-1].applied == "yes" and shown[-1].time.endswith("+00:00")
    assert len(log.recent(where=OTHER, count=50)) == 10
    assert log.recent(where="matrix:!none:t", count=5) == []


def test_a_file_larger_than_a_block_is_read_from_its_end(tmp_path: Path) -> None:
    path = tmp_path / "audit.ndjson"
    log = AuditLog(path)
    name = "x" * 900
    for n in range(300):  # ~300 kB: several blocks, lines cut across block edges
        log.write(entry(ROOM, f"/add {name}{n} --category 1"))
    log.close()
    assert path.stat().st_size > 4 * 64 * 1024
    shown = read_recent(path, where=ROOM, count=300)
    assert [r.line for r in shown] == [f"/add {name}{n} --category 1" for n in range(300)]


def test_lines_that_are_not_records_are_skipped_and_unknown_fields_not_shown(tmp_path: Path) -> None:
    path = tmp_path / "audit.ndjson"
    good = {"time": "t", "actor": "@ann:t", "role": "admin", "where": ROOM, "line": "/add a", "outcome": "ok"}
    path.write_text(
        "\n".join(
            [
                json.dumps(
                    {**good, "secret": "sk-live-123", "approver": "@ben:t", "event_id": "$e", "pending_code": "7F3K"}
                ),
                "not json",
                json.dumps(["a", "list"]),
                json.dumps({**good, "line": "torn"})[:-5],  # a line cut short (a crash mid-write)
            ]
        ),
        encoding="utf-8",
    )
    (shown,) = read_recent(path, where=ROOM, count=10)
    assert shown.details == (("code", "7F3K"), ("approver", "@ben:t"), ("event", "$e")) and "sk-live" not in repr(shown)
    assert read_recent(tmp_path / "missing.ndjson", where=ROOM, count=10) == []


def test_a_room_whose_id_json_escapes_is_found(tmp_path: Path) -> None:
    odd = 'matrix:!ü"\\\x07:t'
    log = AuditLog(tmp_path / "audit.ndjson")
    log.write(entry(odd, "/add a --category 1"))
    log.write(entry(ROOM, "/add b --category 1"))
    log.close()
    assert [r.line for r in log.recent(where=odd, count=5)] == ["/add a --category 1"]
