"""Fixtures of the reliability suite: the fault server, the real service as a subprocess."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from faultserver import FaultServer
from server.support import running_server

from .support import CANARY


@pytest.fixture(scope="session")
def faults() -> Iterator[FaultServer]:
    server = FaultServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """``python -m petstore_server`` on a free loopback port, keyed by the canary: (base URL, db path)."""
    db = tmp_path_factory.mktemp("service") / "pets.db"
    with running_server(db, keys=[CANARY]) as (_, url, _):
        yield url, db
