"""Several processes opening one new SQLite file at once (faces started together on a fresh sandbox)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

from petstore_server.store import PetStore


def _open(path: str, start: Any, results: Any) -> None:
    start.wait(timeout=30)
    try:
        store = PetStore(path)
    except Exception as exc:  # reported to the test
        results.put(f"{type(exc).__name__}: {exc}")
        return
    results.put(store.schema_version())
    store.close()


def test_processes_opening_a_new_file_together_all_get_it(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    for attempt in range(10):  # each a fresh file: the race is in its first moments
        path = str(tmp_path / f"pets-{attempt}.db")
        start, results = context.Barrier(4), context.Queue()
        workers = [context.Process(target=_open, args=(path, start, results)) for _ in range(4)]
        for worker in workers:
            worker.start()
        outcomes = [results.get(timeout=60) for _ in workers]
        for worker in workers:
            worker.join(timeout=60)
        assert all(isinstance(o, int) and o > 0 for o in outcomes), outcomes
