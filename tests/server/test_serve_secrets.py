"""``petstore serve``'s secrets stay off its command line and out of its messages.

API keys come from ``--api-key-file`` or ``PETSTORE_SERVER_API_KEYS``; the database password from
``PETSTORE_SERVER_DB`` or libpq's ``PGPASSFILE``; ``--api-key`` and a ``--db`` URL with a password are refused with
one line (exit 2). No error ever shows a password: unknown schemes, malformed URLs, refused connections.
Every process here is the real program (``petstore serve`` or ``python -m petstore_server``).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from pg_support import PgServer, password_pg_server

from .support import REPO, running_server

pytestmark = pytest.mark.slow
PASSWORD = "pw-Secr3t-5e1f"
KEY_A, KEY_B = "sk-alice-0123456789abcdef", "sk-bob-0123456789abcdef"
ENTRY_POINTS = {
    "petstore serve": ["-m", "petstore_cli", "serve"],
    "python -m petstore_server": ["-m", "petstore_server"],
}


def serve(*args: str, entry: str = "petstore serve", env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The service started and expected to stop at once (bad options, no database): exit code and output."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "PG"))}
    return subprocess.run(
        [sys.executable, *ENTRY_POINTS[entry], "--port", "0", *args],
        cwd=REPO,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )


def one_line(done: subprocess.CompletedProcess, code: int, *, secret: str) -> str:
    assert done.returncode == code, done.stderr
    assert done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    assert secret not in done.stderr and "Traceback" not in done.stderr
    return done.stderr


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_a_key_on_the_command_line_is_refused_saying_where_it_goes(tmp_path: Path, entry: str) -> None:
    done = serve("--db", str(tmp_path / "p.db"), "--api-key", KEY_A, entry=entry)
    line = one_line(done, 2, secret=KEY_A)
    assert "--api-key" in line and "--api-key-file FILE" in line and "PETSTORE_SERVER_API_KEYS" in line
    assert not (tmp_path / "p.db").exists()  # refused before anything was opened


@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_a_db_url_with_a_password_on_the_command_line_is_refused(tmp_path: Path, entry: str) -> None:
    for url in (f"postgresql://u:{PASSWORD}@127.0.0.1/db", f"postgresql://u@127.0.0.1/db?password={PASSWORD}"):
        line = one_line(serve("--db", url, entry=entry), 2, secret=PASSWORD)
        assert "PETSTORE_SERVER_DB" in line and "~/.pgpass" in line


@pytest.mark.parametrize("where", ["flag", "env"])
def test_an_unknown_scheme_is_named_without_the_password(where: str) -> None:
    url = f"mysql://u:{PASSWORD}@h/db"
    done = serve("--db", url) if where == "flag" else serve(env={"PETSTORE_SERVER_DB": url})
    line = one_line(done, 2, secret=PASSWORD)
    assert "unknown database scheme mysql://" in line and "postgresql://" in line
    assert line.startswith("error: --db:" if where == "flag" else "error: PETSTORE_SERVER_DB:")


@pytest.mark.parametrize(
    ("url", "says"),
    [
        (f"postgresql://u:{PASSWORD}%zz@127.0.0.1:5432/db", "invalid percent-encoded token"),  # libpq echoes it
        (f"postgresql://u:{PASSWORD}@127.0.0.1:5432/db?bogus=1", "invalid URI query parameter"),
        (f"postgresql://postgres:{PASSWORD}@127.0.0.1:1/db", "Connection refused"),
    ],
    ids=["malformed", "unknown-parameter", "refused"],
)
@pytest.mark.parametrize("entry", ENTRY_POINTS)
def test_a_database_that_cannot_be_opened_is_one_line_without_the_password(url: str, says: str, entry: str) -> None:
    line = one_line(serve(env={"PETSTORE_SERVER_DB": url}, entry=entry), 1, secret=PASSWORD)
    assert line.startswith("error: cannot open the database: ") and says in line


def key_file(path: Path, *keys: str, mode: int = 0o600) -> Path:
    path.write_text("# one key a line\n" + "".join(f"{key}\n\n" for key in keys))
    path.chmod(mode)
    return path


def test_keys_come_from_a_file_tightened_with_one_line(tmp_path: Path) -> None:
    keys = key_file(tmp_path / "keys", KEY_A, KEY_B, mode=0o644)
    with running_server(tmp_path / "p.db", "--api-key-file", str(keys)) as (proc, url, _):
        for key in (KEY_A, KEY_B, "sk-nobody-0123456789"):
            response = httpx.get(f"{url}/pets", headers={"Authorization": f"Bearer {key}"}, timeout=10)
            assert response.status_code == (401 if "nobody" in key else 200)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    said = [line for line in err.splitlines() if not line.startswith("{")]  # not the access lines
    assert said == [f"petstore: warning: tightened {keys} to 0600 (it was 0644)"]
    assert keys.stat().st_mode & 0o777 == 0o600 and KEY_A not in out + err


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "No such file or directory"),
        ("# nothing but comments\n\n", "holds no key: one a line"),
        (f"{KEY_A}\n{KEY_B} trailing words\n", "line 2: a key is one word of visible ASCII characters"),
    ],
    ids=["missing", "empty", "two-words"],
)
def test_a_bad_key_file_is_one_line_that_shows_no_key(tmp_path: Path, content: str | None, says: str) -> None:
    keys = tmp_path / "keys"
    if content is not None:
        keys.write_text(content)
        keys.chmod(0o600)
    line = one_line(serve("--db", str(tmp_path / "p.db"), "--api-key-file", str(keys)), 2, secret=KEY_B)
    assert line.startswith(f"error: --api-key-file {keys}") and says in line and KEY_A not in line


def test_two_api_keys_over_http_with_one_idempotency_key_make_two_pets(tmp_path: Path, db_target: str) -> None:
    """The issue's case on the real service: Bob sending Alice's ``order-1`` gets his own pet, never hers."""
    keys = key_file(tmp_path / "keys", KEY_A, KEY_B)
    pet = {"name": "Rex", "categoryId": 1}
    with running_server(db_target, "--api-key-file", str(keys)) as (_, url, _):

        def post(key: str, body: dict) -> httpx.Response:
            headers = {"Authorization": f"Bearer {key}", "Idempotency-Key": "order-1"}
            return httpx.post(f"{url}/pets", json=body, headers=headers, timeout=10)

        alice, bob, bob_other = post(KEY_A, pet), post(KEY_B, pet), post(KEY_B, {**pet, "name": "Max"})
        alice_again, bob_again = post(KEY_A, pet), post(KEY_B, pet)
    assert alice.status_code == bob.status_code == 201 and alice.json()["id"] != bob.json()["id"]
    assert "idempotent-replayed" not in bob.headers
    assert bob_other.status_code == 422  # Bob's own key, reused with another body: his to know
    assert alice_again.headers["idempotent-replayed"] == bob_again.headers["idempotent-replayed"] == "true"
    assert (alice_again.json(), bob_again.json()) == (alice.json(), bob.json())


def command_lines(pid: int) -> str:
    """The command lines of ``pid`` and every process under it, as any local user reads them."""
    lines = [Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    for child in children.read_text().split() if children.exists() else []:
        lines.append(command_lines(int(child)))
    return "\n".join(lines)


def test_a_password_in_petstore_server_db_stays_off_every_command_line_and_log(tmp_path: Path, pg_url: str) -> None:
    """The machine's server trusts loopback, so the password is carried and never checked: where does it show?"""
    with_password = pg_url.replace("postgresql://postgres@", f"postgresql://postgres:{PASSWORD}@")
    keys = key_file(tmp_path / "keys", KEY_A)
    env = {"PETSTORE_SERVER_DB": with_password}
    args = ("--api-key-file", str(keys), "--workers", "2", "--log-level", "debug")
    argv = [sys.executable, "-m", "petstore_cli", "serve", "--port", "0", *args]
    with subprocess.Popen(
        argv, cwd=REPO, env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        url = re.search(r"http://\S+/v1", banner)
        assert url, banner
        ok = httpx.get(f"{url.group(0)}/pets", headers={"Authorization": f"Bearer {KEY_A}"}, timeout=10)
        commands = command_lines(proc.pid)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert ok.status_code == 200 and proc.returncode == 0
    assert commands.count("\n") >= 2  # the supervisor and its two workers, at least
    for text in (commands, banner, out, err):
        assert PASSWORD not in text and KEY_A not in text


@pytest.fixture(scope="module")
def guarded_pg() -> PgServer:
    with password_pg_server(PASSWORD) as server:
        yield server


def test_the_password_from_pgpassfile_or_petstore_server_db_opens_a_guarded_database(
    tmp_path: Path, guarded_pg: PgServer
) -> None:
    """A server that checks the password (scram-sha-256): libpq's own password file, or the URL in the environment."""
    url = guarded_pg.url()  # no password in it
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"127.0.0.1:{guarded_pg.port}:*:postgres:{PASSWORD}\n")
    pgpass.chmod(0o600)  # libpq ignores a password file others may read
    with_password = url.replace("postgresql://postgres@", f"postgresql://postgres:{PASSWORD}@")
    for env in ({"PGPASSFILE": str(pgpass), "PETSTORE_SERVER_DB": url}, {"PETSTORE_SERVER_DB": with_password}):
        with running_server(None, keys=[KEY_A], env=env) as (_, base, _):
            listed = httpx.get(f"{base}/pets", headers={"Authorization": f"Bearer {KEY_A}"}, timeout=10)
        assert listed.status_code == 200


def test_a_wrong_password_is_one_line_at_once_without_it(guarded_pg: PgServer) -> None:
    wrong = guarded_pg.url().replace("postgresql://postgres@", "postgresql://postgres:wrong-Secr3t@")
    line = one_line(serve(env={"PETSTORE_SERVER_DB": wrong}), 1, secret="wrong-Secr3t")
    assert 'password authentication failed for user "postgres"' in line
