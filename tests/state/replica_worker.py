"""A bot replica reduced to its lease, its claims and its outbox: ``python replica_worker.py STATE STATE_DIR LOG``.

Reads event ids on stdin (every replica is sent every message, as Matrix syncs each one to every device) and
answers each as :meth:`petstore_bot.matrix_answer.Answerer.handle` does: its turn (``Replicas.turn``), the command
running for ``COMMAND`` seconds (a command in flight), then, if ``Replicas.may_answer``, the answer appended to LOG
as ``answer EVENT PID`` (LOG plays the chat server) and recorded answered; a lost turn is waited for again. While it
holds the lease it posts the watch announcements queued in the store (``Watcher.deliver``) as ``announce KEY PID``
lines. On stdout: ``held`` and ``lost`` as the lease changes hands, ``done EVENT`` once an event is settled here.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from petstore_bot.chat import Reply
from petstore_bot.replicas import Leadership, Replicas
from petstore_bot.watcher import Watcher
from petstore_state import open_database
from petstore_state.claims import Claims
from petstore_state.lease import open_lease
from petstore_state.watches import WatchStore

#: Seconds a command runs before its answer is sent.
COMMAND = 1.0
SERVICE = "http://petstore.test"


def _say(text: str) -> None:
    print(text, flush=True)


class _ChatServer:
    """Every post is one line appended to LOG, written at once (O_APPEND: the lines of two processes never mix)."""

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def post(self, what: str) -> None:
        os.write(self._fd, f"{what} {os.getpid()}\n".encode())

    async def announce(self, room: str, reply: Reply, /, *, key: str | None = None) -> bool:
        self.post(f"announce {key}")
        return True


async def _answer(replicas: Replicas, chat: _ChatServer, event_id: str, stop: asyncio.Event) -> None:
    while (turn := await replicas.turn(event_id, stop=stop)) is True:
        await asyncio.sleep(COMMAND)  # the command runs
        if await replicas.may_answer(event_id):
            chat.post(f"answer {event_id}")
            await replicas.answered(event_id)
            break
        _say(f"not answered here {event_id}")
    if turn is not None:
        _say(f"done {event_id}")


async def _lease_changes(replicas: Replicas) -> None:
    while True:
        await replicas.lease.wait_held()
        _say("held")
        await replicas.lease.wait_lost()
        _say("lost")


async def main(state: str, state_dir: Path, log: Path) -> None:
    chat, stop = _ChatServer(log), asyncio.Event()
    database = open_database(state, state_dir=state_dir)
    lease = open_lease(state, state_dir=state_dir, name="bot", ttl=3.0, check=1.0, retry=0.2)  # shortened for tests
    replicas = Replicas(lease=lease, claims=Claims(database, scope="bot"), poll=0.2)
    watcher = Watcher(store=WatchStore(database, service=SERVICE), client=None, announce=chat.announce, lease=lease)  # type: ignore[arg-type]

    async def deliver() -> None:
        while True:
            await watcher.deliver()
            await asyncio.sleep(0.3)

    leadership = Leadership(lease)
    leadership.add("announcements", deliver)
    background = [asyncio.create_task(leadership.run(stop)), asyncio.create_task(_lease_changes(replicas))]
    answering: set[asyncio.Task[None]] = set()
    while line := await asyncio.to_thread(sys.stdin.readline):
        task = asyncio.create_task(_answer(replicas, chat, line.strip(), stop))
        answering.add(task)
        task.add_done_callback(answering.discard)
    await asyncio.gather(*answering)
    stop.set()
    await background[0]
    lease.close()
    database.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])))
