"""Who asked: a terminal's identity comes from what the system authenticated, never from a variable it can set.

On SQLite state the asker is the login of the process's real uid; on PostgreSQL state a trigger makes it the role
the connection logged in as (``pg:<session_user>``), whatever the terminal wrote, and keeps it as made. ``[bot.people]``
says which names are one person. Real databases: a SQLite file, and a PostgreSQL database of each test's own.
"""

from __future__ import annotations

import os
import pwd
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from pg_support import database_url, start_pg_server
from pydantic import ValidationError

from bot_commands.people import People
from bot_commands.policy import local_actor
from petstore_bot.settings import BotSettings
from petstore_state import open_database
from petstore_state.pending import PendingStore

REAL_LOGIN = pwd.getpwuid(os.getuid()).pw_name


def test_the_local_actor_is_the_real_uid_whatever_the_environment_says(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("USER", "LOGNAME", "LNAME", "USERNAME"):
        monkeypatch.setenv(name, "carol")
    assert local_actor().id == f"local:{REAL_LOGIN}" != "local:carol"


async def _ask(store: PendingStore, *, asker: str) -> str:
    made = await store.create(
        kind="approve", asker=asker, role="operator", where="terminal", line="/add Spoofy", what="add pet 'Spoofy'",
        fields=(("name", "Spoofy"),), env="production", ttl=600,
    )  # fmt: skip
    return made.code


@pytest.fixture
def pg_url() -> Iterator[str]:
    with start_pg_server() as server, database_url(server) as url:
        yield url


async def test_on_postgresql_the_asker_is_the_role_the_terminal_logged_in_as(pg_url: str, tmp_path: Path) -> None:
    role = f"t_alice_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")
        admin.execute(f"GRANT ALL ON SCHEMA public TO {role}")
    try:
        bot_store = PendingStore(open_database(pg_url, state_dir=tmp_path))  # the bot's role makes the tables
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(f"GRANT SELECT, INSERT, UPDATE ON pending_writes TO {role}")
            admin.execute(f"GRANT SELECT ON state_schemas TO {role}")
        alice_url = pg_url.replace("postgres@", f"{role}@", 1)
        terminal = PendingStore(open_database(alice_url, state_dir=tmp_path))
        code = await _ask(terminal, asker="local:carol")
        assert (await terminal.get(code)).asker == f"pg:{role}"  # type: ignore[union-attr]
        with psycopg.connect(alice_url, autocommit=True) as conn:  # what a terminal may do with the state URL
            conn.execute(
                "UPDATE pending_writes SET asker = '@carol:hs', location = 'matrix:!ops' WHERE code = %s", (code,)
            )
        found = await bot_store.get(code)
        assert found is not None and (found.asker, found.where) == (f"pg:{role}", "terminal")
        chat = await bot_store.create(
            kind="approve", asker="@bob:hs", role="operator", where="matrix:!ops", line="/add A", what="add pet 'A'",
            fields=(("name", "A"),), env="production", ttl=600,
        )  # fmt: skip
        assert chat.asker == "@bob:hs"  # a bot's request asked in a room keeps the room's name of its asker
        terminal.database.close()
        bot_store.database.close()
    finally:
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(f"DROP OWNED BY {role}")
            admin.execute(f"DROP ROLE {role}")


async def test_on_sqlite_the_store_keeps_what_the_terminal_named(tmp_path: Path) -> None:
    store = PendingStore(open_database(f"sqlite:///{tmp_path / 's.sqlite3'}", state_dir=tmp_path))
    code = await _ask(store, asker=local_actor().id)
    assert (await store.get(code)).asker == f"local:{REAL_LOGIN}"  # type: ignore[union-attr]
    store.database.close()


def test_people_are_one_person_across_their_names() -> None:
    people = People.of({"alice": ["@alice:hs", "local:alice", "pg:alice"], "bob": ["@bob:hs"]})
    assert people.same("local:alice", "@alice:hs") and people.same("pg:alice", "local:alice")
    assert not people.same("local:alice", "@bob:hs")
    assert people.same("@zed:hs", "@zed:hs") and not people.same("@zed:hs", "local:zed")  # unlisted: itself only
    assert people.names("local:alice") == ("local:alice", "@alice:hs", "pg:alice")
    assert people.names("@zed:hs") == ("@zed:hs",)


def test_a_name_given_to_two_people_is_refused_in_one_line() -> None:
    with pytest.raises(ValidationError) as caught:
        BotSettings(people={"alice": ["@a:hs", "local:x"], "bob": ["local:x"]})
    errors = caught.value.errors()
    assert len(errors) == 1
    assert "'local:x' is listed for both 'alice' and 'bob'" in errors[0]["msg"]
    assert BotSettings(people={"alice": ["@a:hs", "local:a"]}).who.same("@a:hs", "local:a")
