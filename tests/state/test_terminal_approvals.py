"""Approvals asked for from a terminal: the real ``petstore`` over a real ``petstore serve``, requests in a real
state database (SQLite, and a PostgreSQL database of the test's own).

The second person is played here through the store's own API (``take`` / ``finish``, ``deny``), as a bot does it:
the room's side (``!approve`` in a real Synapse) is tests/matrix/test_terminal_approval.py.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import ROOT, clean_env, keyed_service, petstore_main

from bot_commands.errors import ApprovalExpired
from bot_commands.policy import local_actor
from bot_commands.ports import WriteRequest
from petstore_cli.approvals import TerminalApproval, WaitOptions
from petstore_state import open_database
from petstore_state.pending import PendingStore, PendingWrite

KEY = "sk-test-approvals-0123456789"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``petstore serve`` on loopback (seeded): its base URL."""
    with keyed_service(tmp_path_factory.mktemp("serve"), KEY) as url:
        yield url


@pytest.fixture
def config(tmp_path: Path, service: str, state_url: str) -> Path:
    """A config whose production is the service, under approvals, with the requests in ``state_url``."""
    path = tmp_path / "petstore.toml"
    path.write_text(
        f'[production]\nbase_url = "{service}"\napi_key = "{KEY}"\n[http]\nallow_insecure_http = true\n'
        f'[bot]\napprovals = ["production"]\napprovals_room = "!ops:localhost"\nstate = "{state_url}"\n',
        encoding="utf-8",
    )
    path.chmod(0o600)
    return path


def petstore(tmp_path: Path, config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return petstore_main("--config", str(config), *args, env=clean_env(tmp_path))


def store_of(state_url: str, tmp_path: Path) -> PendingStore:
    return PendingStore(open_database(state_url, state_dir=tmp_path))


def test_no_wait_prints_the_request_id_and_the_request_holds_every_field(
    tmp_path: Path, config: Path, state_url: str
) -> None:
    done = petstore(tmp_path, config, "--env", "production", "add", "Rex", "--category", "3", "--no-wait")
    assert done.returncode == 0, done.stderr
    code = done.stdout.strip()
    assert len(code) == 6 and code.isalnum()
    assert f"petstore approvals show {code}" in done.stderr
    store = store_of(state_url, tmp_path)
    write = store.get_sync(code)
    assert write is not None and write.state == "waiting" and write.kind == "approve"
    assert write.where == "terminal" and write.asker.startswith(("local:", "pg:")) and write.env == "production"
    assert write.line == "/add Rex --category 3"
    assert write.fields == (("name", "Rex"), ("categoryId", "3"))
    assert 3500 < write.expires - write.created <= 3600
    store.database.close()


def test_no_wait_in_json_is_the_request_record(tmp_path: Path, config: Path) -> None:
    done = petstore(
        tmp_path, config, "--env", "production", "add", "Rex", "--category", "1", "--no-wait", "--format", "json"
    )
    assert done.returncode == 0, done.stderr
    [record] = json.loads(done.stdout)
    assert record["state"] == "waiting" and record["what"].startswith("add pet 'Rex'") and len(record["id"]) == 6


def test_approvals_lists_and_shows_the_requests(tmp_path: Path, config: Path) -> None:
    first = petstore(
        tmp_path, config, "--env", "production", "add", "Ada", "--category", "1", "--no-wait"
    ).stdout.strip()
    second = petstore(
        tmp_path, config, "--env", "production", "add", "Bo", "--category", "1", "--no-wait"
    ).stdout.strip()
    listed = petstore(tmp_path, config, "approvals", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    records = json.loads(listed.stdout)
    assert [r["id"] for r in records] == [second, first]  # newest first
    assert set(records[0]) == {"id", "asker", "what", "state", "age"}
    table = petstore(tmp_path, config, "approvals")
    assert table.stdout.splitlines()[0].split() == ["id", "asker", "what", "state", "age"]
    assert first in table.stdout and "waiting" in table.stdout
    shown = petstore(tmp_path, config, "approvals", "show", first.lower(), "--format", "json")
    assert shown.returncode == 0, shown.stderr
    detail = json.loads(shown.stdout)[0]
    assert detail["id"] == first and detail["fields"] == {"name": "Ada", "categoryId": "1"}
    assert detail["env"] == "production" and detail["where"] == "terminal" and detail["decided_by"] == ""
    missing = petstore(tmp_path, config, "approvals", "show", "NOPE22")
    assert missing.returncode == 1 and "no request for approval 'NOPE22'" in missing.stderr


def test_a_write_without_a_store_is_one_line_and_sends_nothing(tmp_path: Path, service: str) -> None:
    config = tmp_path / "petstore.toml"
    config.write_text(
        f'[production]\nbase_url = "{service}"\napi_key = "{KEY}"\n[http]\nallow_insecure_http = true\n'
        '[bot]\napprovals = ["production"]\n',
        encoding="utf-8",
    )
    config.chmod(0o600)
    done = petstore(tmp_path, config, "--env", "production", "add", "Rex", "--category", "1")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "petstore: writes on production need a second person's approval ([bot] approvals), and requests go "
        "through the bots' shared state: set [bot] state (postgresql://... or sqlite:///PATH, the one the bot "
        "uses); nothing was sent"
    ]
    listed = petstore(tmp_path, config, "approvals")
    assert listed.returncode == 2 and "set [bot] state" in listed.stderr


def test_reads_are_not_held(tmp_path: Path, config: Path) -> None:
    done = petstore(tmp_path, config, "--env", "production", "list", "--limit", "1", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)) == 1


def _waiting(config: Path, tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "petstore_cli", "--config", str(config), "--env", "production", "add", *args],
        cwd=ROOT,
        env=clean_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _request(store: PendingStore, *, deadline: float = 30.0) -> PendingWrite:
    """The one waiting request, once the terminal has made it."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        waiting = store.recent_sync(states=("waiting",), kind="approve")
        if waiting:
            return waiting[0]
        time.sleep(0.05)  # polling a database for a row another process writes
    raise AssertionError("no request for approval was made")


def test_the_terminal_prints_the_approved_result_as_the_command_would(
    tmp_path: Path, config: Path, state_url: str
) -> None:
    proc = _waiting(config, tmp_path, "Approved Rex", "--category", "2", "--format", "json")
    store = store_of(state_url, tmp_path)
    try:
        write = _request(store)
        taken = asyncio.run(store.transition(write.code, check=_anyone, to="approved", by="@bob:localhost"))
        assert taken.taken
        pet = {"id": 4242, "name": "Approved Rex", "categoryId": 2}
        record = {"command": write.line, "ok": True, "result": pet}
        asyncio.run(store.finish(write.code, ok=True, result=json.dumps(record)))
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill() if proc.poll() is None else None
        store.database.close()
    assert proc.returncode == 0, err
    assert json.loads(out) == [pet]
    assert f"request {write.code} waits in !ops:localhost" in err


def test_a_denial_prints_who_and_why_and_exits_2(tmp_path: Path, config: Path, state_url: str) -> None:
    proc = _waiting(config, tmp_path, "Denied Rex", "--category", "1")
    store = store_of(state_url, tmp_path)
    try:
        write = _request(store)
        assert asyncio.run(
            store.transition(write.code, check=_anyone, to="denied", by="@bob:localhost", reason="not on a Friday")
        ).taken
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill() if proc.poll() is None else None
        store.database.close()
    assert proc.returncode == 2
    assert out == ""
    assert "@bob:localhost denied add pet 'Denied Rex' (category 1): not on a Friday; nothing was sent" in err


def test_wait_bounds_the_wait_and_the_request_stays(tmp_path: Path, config: Path, state_url: str) -> None:
    done = petstore(tmp_path, config, "--env", "production", "add", "Patient", "--category", "1", "--wait", "0.5")
    assert done.returncode == 1
    assert "stopped waiting after 0.5 s" in done.stderr and "may still run: petstore approvals show" in done.stderr
    store = store_of(state_url, tmp_path)
    assert [w.state for w in store.recent_sync(kind="approve")] == ["waiting"]
    store.database.close()


def test_an_expired_request_ends_the_wait_with_exit_2(database_store: PendingStore) -> None:
    """The TTL (at least a minute in the settings) passes on a clock of the test's own."""
    now = [1_000_000.0]
    said: list[str] = []
    approval = TerminalApproval(
        database_store,
        env="production",
        ttl=60,
        room=None,
        options=WaitOptions(),
        say=said.append,
        clock=lambda: now[0],
        poll=0.01,
    )
    database_store.clock = lambda: now[0]

    async def main() -> None:
        task = asyncio.create_task(
            approval(WriteRequest(line="/add Late", what="add pet 'Late'", fields=(), actor=local_actor()))
        )
        while not said:
            await asyncio.sleep(0.01)
        now[0] += 61
        with pytest.raises(ApprovalExpired, match="expired: nobody approved add pet 'Late' in time"):
            await task

    asyncio.run(main())


@pytest.fixture
def database_store(database: object) -> PendingStore:
    from petstore_state import Database

    assert isinstance(database, Database)
    return PendingStore(database)


def test_ctrl_c_stops_the_wait_and_the_request_stays(tmp_path: Path, config: Path, state_url: str) -> None:
    import signal

    proc = _waiting(config, tmp_path, "Interrupted Rex", "--category", "1")
    store = store_of(state_url, tmp_path)
    try:
        write = _request(store)
        assert proc.stderr is not None
        assert "Ctrl-C stops waiting" in proc.stderr.readline()  # the wait has begun
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 130
        assert f"Stopped waiting; request {write.code} still waits: petstore approvals show {write.code}" in err
        assert "Traceback" not in err
        found = store.get_sync(write.code)
        assert found is not None and found.state == "waiting"
    finally:
        proc.kill() if proc.poll() is None else None
        store.database.close()


def test_a_terminal_is_who_the_system_says_not_who_user_says(tmp_path: Path, config: Path, state_url: str) -> None:
    """``USER=carol petstore --env production add Spoofy``: the request is the real uid's (SQLite) or the database
    role's (PostgreSQL), never carol's."""
    env = clean_env(tmp_path, USER="carol", LOGNAME="carol", LNAME="carol", USERNAME="carol")
    done = petstore_main(
        "--config", str(config), "--env", "production", "add", "Spoofy", "--category", "1", "--no-wait", env=env
    )
    assert done.returncode == 0, done.stderr
    store = store_of(state_url, tmp_path)
    write = store.get_sync(done.stdout.strip())
    assert write is not None and "carol" not in write.asker
    assert write.asker == (
        f"local:{local_actor().id.split(':', 1)[1]}" if state_url.startswith("sqlite") else "pg:postgres"
    )
    store.database.close()


def _anyone(write: PendingWrite) -> None:
    """A bot's decision stands in here: the rules of who may decide are the bots' (tests/bot)."""
    return None
