"""The embedded sandbox: the service in-process, on its own data directory.

``data_dir`` holds ``sandbox.db`` (and its WAL) and ``api-key`` (generated once), all mode 0600.
A new database is seeded with the sample pets; ``reset=True`` wipes it and
seeds the same pets again, so demos replay identically.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from starlette.types import ASGIApp

from petstore_os import Warn, open_private, read_secret_lines

from .app import create_app
from .sqlite_store import SqliteStore
from .store import PetStore

__all__ = ["KEY_PREFIX", "Sandbox", "load_or_create_key"]

KEY_PREFIX = "sk-sandbox-"
_DB_NAME = "sandbox.db"
_KEY_NAME = "api-key"


def load_or_create_key(path: Path, *, warn: Warn | None = None) -> str:
    """The key stored at ``path``; created there (mode 0600) when absent or empty, tightened to 0600 if loose."""
    try:
        fd = open_private(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    except FileExistsError:
        lines = read_secret_lines(path, warn=warn)
        if lines:
            return lines[0][1]
        path.unlink()
        return load_or_create_key(path, warn=warn)
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    with os.fdopen(fd, "w", encoding="ascii") as file:
        file.write(key + "\n")
    return key


@dataclass(slots=True)
class Sandbox:
    """An app over a local store, and the key it accepts.

    ``store`` is the synchronous SQLite store (tests and tools write through it directly);
    the app reaches the same store through :class:`SqliteStore`, off the event loop.
    """

    app: ASGIApp
    api_key: str
    db_path: Path
    store: PetStore

    @classmethod
    def open(cls, data_dir: Path, *, reset: bool = False, warn: Warn | None = None) -> Sandbox:
        """The sandbox in ``data_dir``; ``warn`` takes the line said of a file found open to others (default:
        stderr), which is tightened to 0600."""
        data_dir = Path(data_dir)
        data_dir.mkdir(parents=True, exist_ok=True)
        api_key = load_or_create_key(data_dir / _KEY_NAME, warn=warn)
        db_path = data_dir / _DB_NAME
        store = PetStore(db_path, warn=warn)
        if reset:
            store.reset()
        store.seed_sample()
        app = create_app(SqliteStore(store), api_keys=[api_key])
        return cls(app=app, api_key=api_key, db_path=db_path, store=store)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
