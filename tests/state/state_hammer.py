"""Several processes on one SQLite state file, as bots and terminals share it: every acknowledged row must read back.

:func:`hammer` starts real processes for ``seconds``: *bots* (this file run as ``bot``: the state database and a lease
on it, two connections in one process, as ``petstore bot`` holds them, writing rows while the lease is held or not)
and *terminals* (run as ``terminal``: open the state, write one row, close it, again and again, as each ``petstore``
command does), while the calling thread runs the real ``petstore`` at a terminal: ``--env production add NAME
--no-wait`` (a request for approval, its code printed) and ``petstore approvals`` (the list). A row counts as
acknowledged once its commit returned (the worker prints ``ack WRITER N``) or the command printed its code. A write
refused with ``database is locked`` (another process kept the write lock past SQLite's busy timeout, on a loaded
machine) is counted as ``busy``: not acknowledged, and not a fault; any other error is a failure.

:func:`problems` then reads the file back: every acknowledged row with what was written, ``PRAGMA integrity_check``
``ok``, the database and its WAL and -shm 0600. tests/state/test_shared_sqlite.py runs it for ~20 s, and
``bench/state_soak.py`` for minutes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from petstore_state import StateError, Transaction, open_database
from petstore_state.lease import open_lease

ROOT = Path(__file__).resolve().parents[2]
_TABLE = ["CREATE TABLE IF NOT EXISTS hammer_rows (writer TEXT, n INTEGER, body TEXT, PRIMARY KEY (writer, n))"]
#: The processes' umask: a file created without an explicit mode would be readable by everyone.
_UMASK = 0o022
#: Seconds a bot waits between two writes (a busy bot: hundreds a second together), so that the lease's heartbeat
#: and the terminals get the write lock too.
_PACE = 0.002


def _body(writer: str, n: int) -> str:
    return f"{writer} row {n} " + "x" * (n % 200)


def _insert(writer: str, n: int) -> Callable[[Transaction], None]:
    def insert(tx: Transaction) -> None:
        tx.execute("INSERT INTO hammer_rows (writer, n, body) VALUES (?, ?, ?)", (writer, n, _body(writer, n)))

    return insert


def _said(writer: str, n: int, failed: StateError | None) -> int:
    """Say how write ``n`` ended: ``ack``, ``busy`` (another process kept the write lock past SQLite's busy timeout:
    not acknowledged, and no fault of the file) or an error line; 1 for an error."""
    if failed is None or "database is locked" in str(failed):
        print(f"{'ack' if failed is None else 'busy'} {writer} {n}", flush=True)
        return 0
    print(f"error {writer} {n}: {failed}", file=sys.stderr, flush=True)
    return 1


async def _bot(state: str, state_dir: Path, until: float, writer: str) -> int:
    """The state database and a lease on the same file, held while writing rows (as ``petstore bot`` does)."""
    database = open_database(state, state_dir=state_dir)
    database.ensure_schema("hammer", _TABLE)
    lease = open_lease(state, state_dir=state_dir, name="hammer", ttl=3.0, check=0.5, retry=0.2)
    stop = asyncio.Event()
    holding = asyncio.create_task(lease.hold(stop))
    errors, n = 0, 0
    while time.time() < until:
        n += 1
        try:
            await database.run(_insert(writer, n))
            errors += _said(writer, n, None)
        except StateError as exc:
            errors += _said(writer, n, exc)
        await asyncio.sleep(_PACE)
    stop.set()
    await holding
    lease.close()
    database.close()
    return errors


def _terminal(state: str, state_dir: Path, until: float, writer: str) -> int:
    """Open the state, write one row, close it: again and again (as each ``petstore`` command does)."""
    errors, n = 0, 0
    while time.time() < until:
        n += 1
        try:
            database = open_database(state, state_dir=state_dir)
            try:
                database.ensure_schema("hammer", _TABLE)
                database.run_sync(_insert(writer, n))
            finally:
                database.close()
            errors += _said(writer, n, None)
        except StateError as exc:
            errors += _said(writer, n, exc)
    return errors


@dataclass
class Run:
    """What a :func:`hammer` run acknowledged, and what went wrong while it ran."""

    rows: set[tuple[str, int]] = field(default_factory=set)
    #: The code of each request the real ``petstore ... add NAME --no-wait`` printed, with NAME.
    requests: dict[str, str] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    commands: int = 0
    #: Writes refused because another process held the write lock past the busy timeout (not acknowledged).
    busy: int = 0
    #: What the processes logged (the lease changing hands, on SQLite under load).
    logged: list[str] = field(default_factory=list)


def _config(home: Path, state: str) -> Path:
    path = home / "petstore.toml"
    path.write_text(
        '[production]\nbase_url = "http://127.0.0.1:9/v1"\napi_key = "sk-hammer-0123456789"\n'
        f'[bot]\napprovals = ["production"]\napprovals_room = "!ops:localhost"\nstate = "{state}"\n',
        encoding="utf-8",
    )
    path.chmod(0o600)
    return path


def _environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "NO_COLOR", "FORCE_COLOR"))}
    return env | {"XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data")}


def _terminal_commands(home: Path, state: str, until: float, run: Run) -> None:
    """The real ``petstore`` at a terminal: a request for approval, then the list, until ``until``."""
    config, env = _config(home, state), _environment(home)

    def petstore(*args: str) -> subprocess.CompletedProcess[str]:
        run.commands += 1
        command = [sys.executable, "-m", "petstore_cli", "--config", str(config), *args]
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, umask=_UMASK, timeout=60)
        if done.returncode != 0 and "database is locked" in done.stderr:
            run.busy += 1
        elif done.returncode != 0:
            run.failures.append(f"petstore {args[-1]}: exit {done.returncode}: {done.stderr.strip()}")
        return done

    while time.time() < until:
        name = f"Hammer{run.commands}"
        added = petstore("--env", "production", "add", name, "--category", "1", "--no-wait")
        if added.returncode == 0:
            run.requests[added.stdout.strip()] = name
        petstore("approvals")


def hammer(home: Path, *, seconds: float, bots: int = 2, terminals: int = 2, commands: bool = True) -> Run:
    """Bots, terminals and (``commands``) the real ``petstore`` on ``home/state.sqlite3`` for ``seconds``."""
    state = f"sqlite:///{home / 'state.sqlite3'}"
    until = time.time() + seconds
    roles = [("bot", f"bot{i}") for i in range(bots)] + [("terminal", f"term{i}") for i in range(terminals)]
    workers = [
        subprocess.Popen(
            [sys.executable, __file__, role, state, str(home), str(until), writer],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            umask=_UMASK,
        )
        for role, writer in roles
    ]
    run = Run()
    outputs: list[tuple[str, str, int]] = []
    readers = [
        threading.Thread(target=lambda w=w: outputs.append((*w.communicate(timeout=seconds + 120), w.returncode)))
        for w in workers
    ]
    for reader in readers:
        reader.start()
    if commands:
        _terminal_commands(home, state, until, run)
    for reader in readers:
        reader.join()
    for worker in workers:  # one that hung past its time: it counts as a failure below
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    if len(outputs) < len(workers):
        run.failures.append(f"{len(workers) - len(outputs)} workers did not end")
    for out, err, code in outputs:
        for line in out.splitlines():
            said, _, rest = line.partition(" ")
            if said == "log":
                run.logged.append(rest)
            elif said == "busy":
                run.busy += 1
            else:
                writer, n = rest.split()
                run.rows.add((writer, int(n)))
        run.failures += [line for line in err.splitlines() if line.strip()]
        if code != 0:
            run.failures.append(f"a worker exited {code}")
    return run


def problems(home: Path, run: Run) -> list[str]:
    """What is wrong with the state file after ``run``: rows lost or changed, integrity, modes (empty: nothing)."""
    path = home / "state.sqlite3"
    try:
        return _problems(path, run)
    except sqlite3.DatabaseError as exc:
        return [f"{path.name}: {exc}"]


def _problems(path: Path, run: Run) -> list[str]:
    found: list[str] = []
    with closing(sqlite3.connect(path)) as connection:
        check = [row[0] for row in connection.execute("PRAGMA integrity_check")]
        if check != ["ok"]:
            found.append(f"integrity_check: {check[:5]}")
        stored = dict(((w, n), b) for w, n, b in connection.execute("SELECT writer, n, body FROM hammer_rows"))
        lost = sorted(key for key in run.rows if stored.get(key) != _body(*key))
        if lost:
            found.append(f"{len(lost)} of {len(run.rows)} acknowledged rows lost or changed, e.g. {lost[:5]}")
        requests = dict(connection.execute("SELECT code, line FROM pending_writes")) if run.requests else {}
        wrong = {
            c: requests.get(c) for c, name in run.requests.items() if requests.get(c) != f"/add {name} --category 1"
        }
        if wrong:
            found.append(f"{len(wrong)} of {len(run.requests)} requests lost or changed: {list(wrong.items())[:5]}")
        for suffix in ("", "-wal", "-shm"):  # the connection has them open: the WAL and -shm exist now
            mode = stat.S_IMODE(os.stat(f"{path}{suffix}").st_mode)
            if mode != 0o600:
                found.append(f"{path.name}{suffix} is {mode:04o}, not 0600")
    return found


def main(role: str, state: str, state_dir: str, until: str, writer: str) -> None:
    logging.basicConfig(stream=sys.stdout, format="log %(message)s", level=logging.INFO)
    if role == "bot":
        errors = asyncio.run(_bot(state, Path(state_dir), float(until), writer))
    else:
        errors = _terminal(state, Path(state_dir), float(until), writer)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main(*sys.argv[1:])
