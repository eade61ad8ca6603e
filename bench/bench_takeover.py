"""Takeover time of the bot replicas' lease (issue 39): from SIGKILL or SIGSTOP of the holder to the standby holding
the lease, on SQLite (one file) and on PostgreSQL (127.0.0.1:5432, a database of the bench's own), with the lease's
production settings (``open_lease`` defaults: ttl 6 s, renewed every 2 s, tried every 1 s). Target: at most 10 s.

Each round starts a holder and a standby (two processes of this script, ``--replica STATE``), waits a random part of
a renewal period after the holder took the lease, sends the signal and times the standby's ``held`` line; the frozen
holder is then continued and must say ``lost`` (it wakes up knowing it no longer holds the lease).

    .venv/bin/python bench/bench_takeover.py [--rounds 5] [--budget 600]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import queue
import random
import secrets
import signal
import statistics
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from _common import PY, deadline, report, scratch, verdict

TARGET = 10.0
PG = "postgresql://postgres@127.0.0.1:5432/postgres"


async def _replica(state: str) -> None:
    """A process holding (or waiting for) the lease: ``waiting``, ``held``, ``lost`` on stdout as it changes."""
    from petstore_state.lease import open_lease

    lease = open_lease(state, state_dir=Path("."), name="bench")
    if not await lease.acquire():
        print("waiting", flush=True)
    holding = asyncio.create_task(lease.hold(asyncio.Event()))
    while True:
        await lease.wait_held()
        print("held", flush=True)
        await lease.wait_lost()
        print("lost", flush=True)
    await holding


class _Process:
    def __init__(self, state: str) -> None:
        self.process = subprocess.Popen(
            [PY, __file__, "--replica", state], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put((time.monotonic(), line.strip()))

    def said(self, text: str, *, within: float = 60.0) -> float:
        """When the process printed ``text`` (waits for it)."""
        end = time.monotonic() + within
        while True:
            at, line = self.lines.get(timeout=max(end - time.monotonic(), 0.01))
            if line == text:
                return at

    def end(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGCONT)
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)


def _round(state: str, how: signal.Signals) -> float:
    holder = _Process(state)
    standby: _Process | None = None
    try:
        holder.said("held")
        standby = _Process(state)
        standby.said("waiting")
        time.sleep(random.uniform(0.0, 2.0))  # a random moment of the holder's renewal period
        sent = time.monotonic()
        os.kill(holder.process.pid, how)
        took = standby.said("held") - sent
        if how is signal.SIGSTOP:
            os.kill(holder.process.pid, signal.SIGCONT)
            holder.said("lost")  # it woke up and knows
        return took
    finally:
        holder.end()
        if standby is not None:
            standby.end()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget", type=float, default=600.0)
    parser.add_argument("--replica", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.replica:
        asyncio.run(_replica(args.replica))
        return
    rows: list[dict[str, object]] = []
    with deadline(args.budget):
        for store in ("sqlite", "postgresql"):
            with _store(store) as state:
                for how in (signal.SIGKILL, signal.SIGSTOP):
                    times = [_round(state, how) for _ in range(args.rounds)]
                    worst = max(times)
                    rows.append(
                        {
                            "store": store,
                            "signal": how.name,
                            "median_s": round(statistics.median(times), 2),
                            "min_s": round(min(times), 2),
                            "max_s": round(worst, 2),
                            "rounds": len(times),
                            "target": f"<= {TARGET:g} s",
                            "verdict": verdict(worst <= TARGET),
                        }
                    )
                    print(rows[-1], flush=True)
    report("bench_takeover", rows)


@contextlib.contextmanager
def _store(label: str) -> Iterator[str]:
    if label == "sqlite":
        with scratch() as tmp:
            yield f"sqlite:///{tmp / 'state.sqlite3'}"
        return
    import psycopg

    name = f"bench_takeover_{secrets.token_hex(4)}"
    with psycopg.connect(PG, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield PG.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(PG, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


if __name__ == "__main__":
    main()
