"""A replica frozen with SIGSTOP past its lease, with commands in flight, on both backends (real processes: the
lease, the claims and the outbox of ``replica_worker.py``): the other takes over and answers within 15 s, and
after SIGCONT the frozen one posts nothing: every message is answered once and every new pet announced once."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from petstore_state import Database, open_database
from petstore_state.watches import Cursor, NewPet, WatchStore

pytestmark = pytest.mark.slow

WORKER = Path(__file__).with_name("replica_worker.py")
SERVICE = "http://petstore.test"  # as replica_worker.SERVICE
#: The deadline of an answer after the holder froze (waited for, not timed).
TAKEOVER = 15.0


class _Replica:
    """One ``replica_worker.py`` process; ``lines`` is what it printed so far."""

    def __init__(self, state_url: str, tmp_path: Path, log: Path, name: str) -> None:
        self.errors = tmp_path / f"{name}.stderr"
        with self.errors.open("w") as errors:
            self.process = subprocess.Popen(
                [sys.executable, str(WORKER), state_url, str(tmp_path), str(log)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
            )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.strip())

    def send(self, *event_ids: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("".join(f"{event_id}\n" for event_id in event_ids))
        self.process.stdin.flush()

    def settled(self, *event_ids: str) -> bool:
        return all(f"done {event_id}" in self.lines for event_id in event_ids)

    def end(self) -> None:
        if self.process.poll() is None:
            os.kill(self.pid, signal.SIGCONT)
            os.kill(self.pid, signal.SIGKILL)
        self.process.wait(timeout=10)


@pytest.fixture
def replicas(state_url: str, tmp_path: Path) -> Iterator[Callable[[str], _Replica]]:
    started: list[_Replica] = []

    def start(name: str) -> _Replica:
        started.append(_Replica(state_url, tmp_path, tmp_path / "chat.log", name))
        return started[-1]

    yield start
    for replica in started:
        replica.end()


def _posts(log: Path) -> list[tuple[str, str, int]]:
    """The chat server's posts: (``answer``/``announce``, event id or announcement key, pid of the poster)."""
    text = log.read_text() if log.exists() else ""
    return [(kind, what, int(pid)) for kind, what, pid in (line.split() for line in text.splitlines())]


def _posted(log: Path, kind: str, keys: list[str]) -> bool:
    done = {what for k, what, _ in _posts(log) if k == kind}
    return all(key in done for key in keys)


async def _until(condition: Callable[[], bool], *, deadline: float, what: str) -> None:
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"not within {deadline:g} s: {what}")
        await asyncio.sleep(0.05)


async def _new_pets(store: WatchStore, ids: list[int]) -> list[str]:
    """Pets ``ids`` found by a poll (queued for every watching room); their announcements' keys."""
    seen = await store.cursor(status="")
    assert seen is not None
    found = [NewPet(id=pet_id, record={"id": pet_id, "name": f"pet {pet_id}", "categoryId": 1}) for pet_id in ids]
    assert await store.record(status="", seen=seen, found=found, resume_url=None) == len(ids)
    return [announcement.key for announcement in await store.unsent() if announcement.pet_id in ids]


async def _watching(database: Database) -> WatchStore:
    store = WatchStore(database, service=SERVICE)
    await store.add(status="", room="!room:test", by="@alice:test")
    await store.start(status="", cursor=Cursor(last_id=0, resume_url=None))
    return store


def _claimed(database: Database, event_ids: list[str]) -> Callable[[], bool]:
    def claimed() -> bool:
        rows = database.run_sync(lambda tx: tx.all("SELECT event_id FROM lease_claims WHERE state = 'claimed'"))
        return {str(row[0]) for row in rows} >= set(event_ids)

    return claimed


async def test_a_holder_frozen_past_its_lease_is_replaced_and_posts_nothing_twice(
    state_url: str, tmp_path: Path, replicas: Callable[[str], _Replica]
) -> None:
    log, database = tmp_path / "chat.log", open_database(state_url, state_dir=tmp_path)
    try:
        watches = await _watching(database)
        first = replicas("first")
        await _until(lambda: "held" in first.lines, deadline=TAKEOVER, what="the first replica takes the lease")
        second = replicas("second")
        early = [f"$early{n}" for n in range(3)]
        for replica in (first, second):
            replica.send(*early)
        shown = await _new_pets(watches, [1, 2])
        await _until(lambda: _posted(log, "answer", early) and _posted(log, "announce", shown), deadline=30, what="")
        assert {pid for _, _, pid in _posts(log)} == {first.pid}, "the standby posted"

        late = [f"$late{n}" for n in range(4)]
        for replica in (first, second):
            replica.send(*late)
        await _until(_claimed(database, late), deadline=10, what="the holder claims the late commands")
        os.kill(first.pid, signal.SIGSTOP)  # commands in flight: claimed, running for a second, not answered
        in_flight = [event_id for event_id in late if not _posted(log, "answer", [event_id])]
        assert in_flight, "every command was answered before the freeze"
        paused = await _new_pets(watches, [3, 4])  # pets made during the pause
        await _until(
            lambda: _posted(log, "answer", late) and _posted(log, "announce", paused),
            deadline=TAKEOVER,
            what="the standby answers the frozen holder's commands and announces the new pets",
        )
        assert "held" in second.lines

        os.kill(first.pid, signal.SIGCONT)
        after = ["$after"]
        for replica in (first, second):
            replica.send(*after)
        await _until(lambda: first.settled(*late, *after) and second.settled(*late, *after), deadline=30, what="")
        posts = _posts(log)
        twice = [item for item, n in Counter((kind, what) for kind, what, _ in posts).items() if n > 1]
        assert twice == [], f"posted twice: {twice}"
        assert "lost" in first.lines
        assert any(line.startswith("not answered here") for line in first.lines), first.lines
        assert {(kind, what) for kind, what, _ in posts} == {
            *(("answer", event_id) for event_id in [*early, *late, *after]),
            *(("announce", key) for key in [*shown, *paused]),
        }
        resumed = [post for post in posts if post[2] == first.pid and post[1] in [*in_flight, *after, *paused]]
        assert resumed == [], "the frozen holder posted after it woke up"
    finally:
        database.close()
