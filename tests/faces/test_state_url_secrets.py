"""``[bot] state``'s password stays a secret: ``config show``, a terminal's error, the bot's start log.

The real ``petstore`` in every test. A state URL is shown with its password as ``***``; a malformed one (a port out
of range, an unclosed IPv6 bracket, an unknown scheme, a bare path) is one line, never a traceback, never the
password. The password may also come from libpq's ``PGPASSFILE``, as the service's does (a throwaway PostgreSQL that
checks it). The machine's own PostgreSQL trusts loopback: a password there is carried and never checked, which is
enough to see where it would show.
"""

from __future__ import annotations

import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import ROOT, clean_env, petstore_main
from pg_support import PgServer, database_url, password_pg_server, start_pg_server

pytestmark = pytest.mark.slow

PASSWORD = "pw-St4te-9c1d"
#: A [bot] state URL of each form a password takes, against a port that refuses at once.
HOLDING = {
    "user part": f"postgresql://u:{PASSWORD}@127.0.0.1:1/db",
    "parameter": f"postgresql://u@127.0.0.1:1/db?sslmode=disable&password={PASSWORD}",
    "percent-encoded": f"postgresql://u:{PASSWORD}%40x@127.0.0.1:1/db",
}
MALFORMED = {
    "port out of range": (f"postgresql://u:{PASSWORD}@127.0.0.1:99999/db", 'invalid port number: "99999"'),
    "unclosed IPv6": (f"postgresql://u:{PASSWORD}@[::1/db", "IPv6 host address"),
    "unknown scheme": (f"mysql://u:{PASSWORD}@h/db", "unknown database scheme mysql://: use sqlite:///PATH or"),
    "bare path": ("/var/lib/petstore/state.sqlite3", "not a database URL: use sqlite:///PATH or postgresql://"),
}

#: A Matrix bot that gets as far as opening its state (its homeserver refuses connections: it would keep trying).
MATRIX = {
    "PETSTORE_BOT__MATRIX__HOMESERVER": "http://127.0.0.1:1",
    "PETSTORE_BOT__MATRIX__USER_ID": "@petbot:localhost",
    "PETSTORE_BOT__MATRIX__PASSWORD": "pw-matrix-0123",
}


def petstore(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return petstore_main(*args, env=clean_env(home, **env))


def clean(done: subprocess.CompletedProcess[str], *secrets: str) -> None:
    """No password (in any form) anywhere in what the program said, and no traceback."""
    for text in (done.stdout, done.stderr):
        assert "Traceback" not in text
        for secret in (PASSWORD, "pw-St4te-9c1d%40x", "pw-St4te-9c1d@x", *secrets):
            assert secret not in text


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode != 0 and done.stdout == "", done
    [line] = done.stderr.splitlines()
    assert line.startswith("petstore: "), line
    clean(done)
    return line


@pytest.mark.parametrize("url", HOLDING.values(), ids=HOLDING)
def test_config_show_shows_the_state_url_with_its_password_hidden(tmp_path: Path, url: str) -> None:
    done = petstore(tmp_path, "config", "show", PETSTORE_BOT__STATE=url)
    assert done.returncode == 0, done.stderr
    clean(done)
    [row] = [line for line in done.stdout.splitlines() if line.startswith("bot.state ")]
    assert "postgresql://u" in row and "***" in row and "env PETSTORE_BOT__STATE" in row


@pytest.mark.parametrize("url", HOLDING.values(), ids=HOLDING)
def test_a_terminal_that_cannot_reach_the_state_says_so_in_one_line_without_the_password(
    tmp_path: Path, url: str
) -> None:
    line = one_line(petstore(tmp_path, "approvals", PETSTORE_BOT__STATE=url))
    assert "cannot connect to the bot's state at postgresql://u" in line and "***" in line


@pytest.mark.parametrize(("url", "says"), MALFORMED.values(), ids=MALFORMED)
def test_a_malformed_state_url_is_one_line_everywhere(tmp_path: Path, url: str, says: str) -> None:
    for args in (("approvals",), ("bot", "matrix"), ("config", "show")):
        done = petstore(tmp_path, *args, PETSTORE_BOT__STATE=url, **MATRIX)
        if args == ("config", "show") and done.returncode == 0:  # a URL it can show: shown, password hidden
            clean(done)
            continue
        line = one_line(done)
        assert says in line, line


def test_a_config_file_holding_the_state_password_is_made_0600(tmp_path: Path) -> None:
    config = tmp_path / "petstore.toml"
    config.write_text(f'[bot]\nstate = "{HOLDING["user part"]}"\n', encoding="utf-8")
    config.chmod(0o644)
    done = petstore(tmp_path, "--config", str(config), "config", "show")
    assert done.returncode == 0, done.stderr
    clean(done)
    assert config.stat().st_mode & 0o777 == 0o600
    assert "# warning: tightened" in done.stdout and "it holds a secret (state)" in done.stdout


@pytest.fixture(scope="module")
def pg() -> Iterator[PgServer]:
    with start_pg_server() as server:
        yield server


def _start_log(home: Path, state: str) -> str:
    """Everything ``petstore bot matrix`` says until its start line (its homeserver refuses: it keeps trying),
    then on SIGTERM."""
    env = clean_env(home, PETSTORE_BOT__STATE=state, **MATRIX)
    command = [sys.executable, "-m", "petstore_cli", "bot", "matrix", "-v"]
    with subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as bot:
        assert bot.stderr is not None
        said, deadline = [], time.monotonic() + 60
        while not any("petstore bot on" in line for line in said) and bot.poll() is None:
            ready, _, _ = select.select([bot.stderr], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, said
            said.append(bot.stderr.readline())
        bot.send_signal(signal.SIGTERM)
        out, err = bot.communicate(timeout=30)
    return "".join(said) + out + err


@pytest.mark.parametrize("form", ["user part", "parameter"])
def test_the_bot_logs_where_its_state_is_without_the_password(tmp_path: Path, pg: PgServer, form: str) -> None:
    with database_url(pg) as url:  # postgresql://postgres@127.0.0.1:5432/t_...
        held = (
            url.replace("postgres@", f"postgres:{PASSWORD}@") if form == "user part" else f"{url}?password={PASSWORD}"
        )
        log = _start_log(tmp_path, held)
    [start] = [line for line in log.splitlines() if "petstore bot on" in line]
    assert start.endswith(f"state {url.replace('postgres@', 'postgres:***@')}" if form == "user part" else "***")
    assert PASSWORD not in log and "Traceback" not in log


@pytest.fixture(scope="module")
def guarded_pg() -> Iterator[PgServer]:
    with password_pg_server(PASSWORD) as server:
        yield server


def test_the_state_password_from_pgpassfile_opens_a_guarded_database(tmp_path: Path, guarded_pg: PgServer) -> None:
    """A server that checks the password (scram-sha-256): libpq's password file, as the service reads it."""
    url = guarded_pg.url()  # no password in it
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"127.0.0.1:{guarded_pg.port}:*:postgres:{PASSWORD}\n")
    pgpass.chmod(0o600)  # libpq ignores a password file others may read
    done = petstore(tmp_path, "approvals", PETSTORE_BOT__STATE=url, PGPASSFILE=str(pgpass))
    assert done.returncode == 0, done.stderr
    clean(done)
    missing = petstore(tmp_path, "approvals", PETSTORE_BOT__STATE=url, PGPASSFILE=str(tmp_path / "none"))
    assert "password" in one_line(missing)
    wrong = url.replace("postgresql://postgres@", "postgresql://postgres:wrong-St4te@")
    line = one_line(petstore(tmp_path, "approvals", PETSTORE_BOT__STATE=wrong, PGPASSFILE=str(tmp_path / "none")))
    assert 'password authentication failed for user "postgres"' in line and "wrong-St4te" not in line
