"""petstore_os.db_url: the one module the service (``--db``) and the bots' state (``[bot] state``) parse database URLs
with and take their passwords out of what is shown. In-process; the faces' and the service's own tests show it at
work (tests/faces/test_state_url_secrets.py, tests/server/test_serve_secrets.py)."""

from __future__ import annotations

import pytest

from petstore_os.db_url import StoreTarget, parse_db, redact, shown, url_password

PW = "s3cr%40t"  # percent-encoded: "s3cr@t"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (f"postgresql://u:{PW}@h:5432/db", "postgresql://u:***@h:5432/db"),
        (f"postgresql://u@h/db?sslmode=require&password={PW}", "postgresql://u@h/db?sslmode=require&password=***"),
        (f"postgresql://u:{PW}@h/db?password={PW}&x=1", "postgresql://u:***@h/db?password=***&x=1"),
        (f"postgresql://u:{PW}@h:99999/db", "postgresql://u:***@h:99999/db"),  # urllib's .port would raise here
        (f"postgresql://u:{PW}@[::1/db", "postgresql://u:***@[::1/db"),  # and here
        (f"postgres://u:{PW}@h", "postgres://u:***@h"),
        ("postgresql://u:p@ss@h/db", "postgresql://u:***@h/db"),  # an "@" in it: hidden whole
        ("postgresql://u@h/db", "postgresql://u@h/db"),
        ("sqlite:////var/lib/petstore/state.sqlite3", "sqlite:////var/lib/petstore/state.sqlite3"),
    ],
)
def test_a_url_is_shown_with_each_password_hidden_whatever_else_is_wrong(url: str, expected: str) -> None:
    assert shown(url) == expected


def test_an_error_message_loses_every_form_of_the_password() -> None:
    url = f"postgresql://u:{PW}@h/db"
    message = f'invalid URI: "{url}"; password "s3cr@t" refused'
    assert redact(message, url) == 'invalid URI: "postgresql://u:***@h/db"; password "***" refused'
    assert url_password(url) == PW and url_password("postgresql://u@h/db") is None


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (f"mysql://u:{PW}@h/db", "unknown database scheme mysql://: use sqlite:///PATH or postgresql://"),
        (f"sqlite://u:{PW}@h", "unknown database address: use sqlite:///PATH"),
        ("/var/lib/state.sqlite3", "not a database URL: use sqlite:///PATH or postgresql://user@host:port/db"),
        ("sqlite:///", "sqlite:/// needs a path"),
    ],
)
def test_what_only_urls_may_name_is_refused_saying_what_is_allowed(value: str, says: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse_db(value, paths=False)
    assert str(refused.value).startswith(says) and PW not in str(refused.value)


def test_the_service_may_name_a_file() -> None:
    assert parse_db("pets.db") == StoreTarget("sqlite", "pets.db") == parse_db("sqlite:///pets.db")
    with pytest.raises(ValueError, match="use a file path, sqlite:///PATH or postgresql://"):
        parse_db("mysql://h/db")
