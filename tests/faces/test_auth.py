"""``petstore auth login|status|logout`` and ``petstore config show``'s environment, through the real entry point
against ``petstore serve`` on loopback: the stored key is used, ``status`` says where it is and never shows it, the
file is 0600; the system keyring through keyring's plugin API (a test backend) when one is there."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import clean_env, run_petstore, serving

KEY = "sk-auth-test-0123456789abcdef"
PLUGIN = Path(__file__).resolve().parent / "keyring_plugin"

pytestmark = pytest.mark.slow


def _env(home: Path, **extra: str) -> dict[str, str]:
    no_ring = {k: v for k, v in clean_env(home).items() if not k.startswith("PYTHON_KEYRING")}
    return no_ring | {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"} | extra  # no system keyring: the file


def petstore(home: Path, *args: str, stdin: str = "", **extra: str) -> subprocess.CompletedProcess[str]:
    return run_petstore(*args, env=_env(home, **extra), stdin=stdin)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("serve")
    with serving(home / "pets.db", _env(home, PETSTORE_SERVER_API_KEYS=KEY)) as url:
        yield url


def test_login_stores_the_key_in_a_0600_file_that_the_faces_use(tmp_path: Path, server: str) -> None:
    assert petstore(tmp_path, "list", "--base-url", server).returncode == 1  # no key: 401
    login = petstore(tmp_path, "auth", "login", "--base-url", server, stdin=KEY + "\n")
    assert login.returncode == 0, login.stderr
    stored = tmp_path / "config" / "petstore" / "credentials.json"
    assert stored.stat().st_mode & 0o777 == 0o600 and json.loads(stored.read_text())["keys"] == {server: KEY}
    listed = petstore(tmp_path, "list", "sold", "--base-url", server, "--format", "csv")
    assert listed.returncode == 0 and "Goldie" in listed.stdout
    status = petstore(tmp_path, "auth", "status", "--base-url", server)
    assert status.returncode == 0 and f"stored in the file {stored} (mode 0600)" in status.stdout
    for said in (login, status):
        assert KEY not in said.stdout + said.stderr and "sk-...cdef" in said.stdout
    assert petstore(tmp_path, "auth", "logout", "--base-url", server).returncode == 0
    assert json.loads(stored.read_text())["keys"] == {}
    assert petstore(tmp_path, "auth", "status", "--base-url", server).returncode == 1
    assert petstore(tmp_path, "list", "--base-url", server).returncode == 1


def test_login_uses_the_system_keyring_where_there_is_one(tmp_path: Path, server: str) -> None:
    ring = {
        "PYTHON_KEYRING_BACKEND": "petstore_test_keyring.TestKeyring",
        "PETSTORE_TEST_KEYRING": str(tmp_path / "ring.json"),
        "PYTHONPATH": str(PLUGIN),
    }
    assert petstore(tmp_path, "auth", "login", "--base-url", server, stdin=KEY + "\n", **ring).returncode == 0
    assert json.loads((tmp_path / "ring.json").read_text()) == {f"petstore {server}": KEY}
    assert not (tmp_path / "config" / "petstore" / "credentials.json").exists()
    status = petstore(tmp_path, "auth", "status", "--base-url", server, **ring)
    assert "stored in the system keyring (test keyring)" in status.stdout and KEY not in status.stdout
    assert petstore(tmp_path, "get", "1", "--base-url", server, **ring).returncode == 0


def test_login_refuses_an_empty_key_and_the_sandbox(tmp_path: Path, server: str) -> None:
    empty = petstore(tmp_path, "auth", "login", "--base-url", server, stdin="\n")
    assert empty.returncode == 2 and "no key given" in empty.stderr
    sandbox = petstore(tmp_path, "auth", "status")
    assert sandbox.returncode == 2 and "the sandbox needs no key" in sandbox.stderr


def test_config_show_says_the_environment_in_effect_and_each_setting_once(tmp_path: Path) -> None:
    rows = [
        line.split()[:2]
        for line in petstore(tmp_path, "config", "show").stdout.splitlines()
        if not line.startswith("#")
    ]
    names = [name for name, _ in rows]
    assert ["env", "sandbox"] in rows and len(names) == len(set(names))
    assert "tui.theme" in names and "ui.theme" not in names
    custom = petstore(tmp_path, "config", "show", "--base-url", "http://127.0.0.1:9/v1").stdout
    assert any(line.split()[:2] == ["env", "custom"] for line in custom.splitlines())
    older = petstore(tmp_path, "config", "show", PETSTORE_UI__THEME="nord").stdout
    assert "older place of tui.theme" in older


def _setting(out: str, name: str) -> list[str]:
    """The row of ``config show`` for ``name``: its name, value and source (columns two spaces apart)."""
    line = next(line for line in out.splitlines() if line.split()[:1] == [name])
    return [part.strip() for part in line.split("  ") if part.strip()]


def test_config_show_names_the_stored_key_masked_and_where_it_is_kept(tmp_path: Path, server: str) -> None:
    before = petstore(tmp_path, "config", "show", "--base-url", server).stdout
    assert _setting(before, "api_key") == ["api_key", "(not set)", "default"]
    assert petstore(tmp_path, "auth", "login", "--base-url", server, stdin=KEY + "\n").returncode == 0
    after = petstore(tmp_path, "config", "show", "--base-url", server).stdout
    stored = tmp_path / "config" / "petstore" / "credentials.json"
    assert _setting(after, "api_key") == [
        "api_key",
        "sk-...cdef",
        f"petstore auth login, in the file {stored} (mode 0600)",
    ]
    assert KEY not in after
    given = petstore(tmp_path, "config", "show", "--base-url", server, PETSTORE_API_KEY="sk-env-key-987654321").stdout
    assert _setting(given, "api_key") == ["api_key", "sk-...4321", "env PETSTORE_API_KEY"]  # the environment wins


def test_login_checks_the_key_with_one_request_and_stores_no_refused_key(tmp_path: Path, server: str) -> None:
    refused = petstore(tmp_path, "auth", "login", "--base-url", server, stdin="sk-not-the-key-0000\n")
    assert refused.returncode == 1 and refused.stdout == ""
    assert (
        refused.stderr
        == "petstore auth login: the server refused it: invalid API key (HTTP 401); the key sk-...0000 was not stored\n"
    )
    assert not (tmp_path / "config" / "petstore" / "credentials.json").exists()
    accepted = petstore(tmp_path, "auth", "login", "--base-url", server, stdin=KEY + "\n")
    assert accepted.returncode == 0 and accepted.stdout.rstrip().endswith(": the server accepted it (GET /pets: 200)")


def test_login_to_a_server_that_does_not_answer_stores_the_key_and_says_it_was_not_checked(tmp_path: Path) -> None:
    gone = "http://127.0.0.1:9/v1"  # the discard port: nothing listens
    login = petstore(tmp_path, "auth", "login", "--base-url", gone, stdin=KEY + "\n")
    assert login.returncode == 0 and ": not checked: cannot connect to 127.0.0.1:9" in login.stdout
    status = petstore(tmp_path, "auth", "status", "--base-url", gone)
    assert status.returncode == 1 and "checked: not checked: cannot connect" in status.stdout


def test_status_checks_the_key_in_effect(tmp_path: Path, server: str) -> None:
    assert petstore(tmp_path, "auth", "login", "--base-url", server, stdin=KEY + "\n").returncode == 0
    good = petstore(tmp_path, "auth", "status", "--base-url", server)
    assert good.returncode == 0 and good.stdout.splitlines()[-1] == "checked: the server accepted it (GET /pets: 200)"
    wrong = petstore(tmp_path, "auth", "status", "--base-url", server, PETSTORE_API_KEY="sk-wrong-key-1234567")
    assert wrong.returncode == 1 and "in effect: the key sk-...4567 of PETSTORE_API_KEY" in wrong.stdout
    assert wrong.stdout.splitlines()[-1] == "checked: the server refused it: invalid API key (HTTP 401)"
    assert "sk-wrong-key-1234567" not in wrong.stdout + wrong.stderr


def test_a_401_names_the_stored_key_and_auth_help_claims_no_key_flag(tmp_path: Path, server: str) -> None:
    refused = petstore(tmp_path, "list", "--base-url", server, PETSTORE_API_KEY="sk-wrong-key-1234567")
    assert refused.returncode == 1 and "or the key petstore auth login stored" in refused.stderr
    help_text = " ".join(petstore(tmp_path, "auth", "--help").stdout.split())
    assert "a key from a flag" not in help_text.lower() and "no flag takes a key" in help_text
    assert petstore(tmp_path, "list", "--api-key", KEY).returncode == 2  # and indeed none does
