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
