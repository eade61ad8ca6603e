"""The server the people tests share (one per module): ``petstore web --tokens FILE`` with web_support.PEOPLE."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from web_support import Served, web_server


@pytest.fixture(scope="module")
def people_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("web-people")


@pytest.fixture(scope="module")
def people(people_home: Path) -> Iterator[Served]:
    """``petstore web --tokens FILE`` with alice (operator), bob (viewer) and carol (none)."""
    with web_server(people_home, people=True) as server:
        yield server
