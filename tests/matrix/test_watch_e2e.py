"""!watch end to end: the real ``petstore bot matrix`` on a real Synapse, its state in a PostgreSQL database of the
test's own, a real ``petstore serve`` (its access log counted) and pets added with the real ``petstore add``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import clean_env, run_petstore
from pg_support import database_url, start_pg_server
from server.support import running_server

from matrix.bot_process import BotConfig, BotProcess, ask, room_with
from matrix.conftest import register
from matrix.cs_client import Event, MatrixUser, from_sender
from matrix.synapse_server import SynapseServer

KEY = "sk-watch-e2e-0123456789"


@pytest.fixture
def state_url() -> Iterator[str]:
    with start_pg_server() as server, database_url(server) as url:
        yield url


@pytest.fixture
def service(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``petstore serve`` with its access log in a file: (base URL, log path)."""
    log = tmp_path / "access.log"
    with running_server(tmp_path / "pets.db", "--access-log", str(log), keys=[KEY]) as (_, url, _):
        yield url, log


def _add(tmp_path: Path, url: str, name: str, *extra: str) -> int:
    env = clean_env(tmp_path / "cli", PETSTORE_BASE_URL=url, PETSTORE_API_KEY=KEY)
    done = run_petstore("add", name, "--category", "3", *extra, "--format", "json", env=env)
    assert done.returncode == 0, done.stderr
    return int(json.loads(done.stdout)[0]["id"])


def _announced(events: list[Event], bot_id: str, pet_id: int) -> list[Event]:
    return [e for e in from_sender(events, bot_id) if e["content"]["body"].startswith(f"New pet {pet_id}:")]


def _bot(homeserver: SynapseServer, tmp_path: Path, url: str, state: str, operators: list[str]) -> BotProcess:
    account = register(homeserver, "petbot")
    config = BotConfig(
        homeserver=homeserver.url,
        user_id=account.user_id,
        root=tmp_path / "bot",
        operators=operators,
        default_role="viewer",
        extra={"bot": {"watch_interval": 1, "state": state}},
    )
    return BotProcess(
        config, password=account.password, args=["-v"], env={"PETSTORE_BASE_URL": url, "PETSTORE_API_KEY": KEY}
    )


async def test_a_pet_added_with_petstore_add_is_announced_once_and_not_again_after_a_restart(
    homeserver: SynapseServer, users: object, tmp_path: Path, service: tuple[str, Path], state_url: str
) -> None:
    url, _ = service
    alice: MatrixUser = await users("alice")  # type: ignore[operator]
    bot = _bot(homeserver, tmp_path, url, state_url, [alice.user_id]).start().ready()
    try:
        bot_id = bot.config.user_id
        room = await room_with(alice, bot_id)
        said = await ask(alice, room, "!watch", bot_id=bot_id)
        assert said["body"].startswith("Watching new pets here: each is posted within 1 s")

        first = _add(tmp_path, url, "<b>Rexy</b> @room")
        events = await alice.wait_for(room, lambda ev: bool(_announced(ev, bot_id, first)))
        body = _announced(events, bot_id, first)[0]["content"]
        assert body["body"] == f"New pet {first}: <b>Rexy</b> @room (category 3)"  # the name as data
        assert "&lt;b&gt;Rexy&lt;/b&gt;" in body["formatted_body"] and body["m.mentions"] == {}

        assert bot.stop() == 0
        missed = _add(tmp_path, url, "Whilst-Down", "--status", "available")  # added while no bot runs
        bot.start().ready()
        after = _add(tmp_path, url, "After-Restart")
        events = await alice.wait_for(
            room, lambda ev: bool(_announced(ev, bot_id, missed)) and bool(_announced(ev, bot_id, after))
        )
        for pet in (first, missed, after):
            assert len(_announced(events, bot_id, pet)) == 1, f"pet {pet} announced other than once"
        said = await ask(alice, room, "!watches", bot_id=bot_id)
        assert said["body"] == "This room watches: every new pet."
    finally:
        assert bot.stop() == 0, bot.log()[-3000:]


async def test_two_rooms_watching_one_filter_cost_one_poll(
    homeserver: SynapseServer, users: object, tmp_path: Path, service: tuple[str, Path], state_url: str
) -> None:
    url, access = service
    alice: MatrixUser = await users("alice")  # type: ignore[operator]
    bot = _bot(homeserver, tmp_path, url, state_url, [alice.user_id]).start().ready()
    try:
        bot_id = bot.config.user_id
        rooms = [await room_with(alice, bot_id) for _ in range(2)]
        for room in rooms:
            assert (await ask(alice, room, "!watch available", bot_id=bot_id))["body"].startswith("Watching new pets")
        pet = _add(tmp_path, url, "Twice-Watched", "--status", "available")
        unseen = _add(tmp_path, url, "Not-Available", "--status", "sold")
        for room in rooms:
            events = await alice.wait_for(room, lambda ev: bool(_announced(ev, bot_id, pet)))
            assert not _announced(events, bot_id, unseen)
    finally:
        assert bot.stop() == 0, bot.log()[-3000:]
    log = bot.log()
    polls = len(re.findall(r"watch available: polled", log))
    starts = len(re.findall(r"watch available: started", log))
    requests = [
        entry
        for entry in (json.loads(line) for line in access.read_text().splitlines())
        if entry["method"] == "GET" and entry["path"] == "/v1/pets" and "status=available" in entry["query"]
    ]
    assert starts == 1 and polls >= 1
    assert len(requests) == polls + starts, "each poll of the filter is one request, whatever the number of rooms"
