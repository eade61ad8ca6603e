"""``petstore auth login|status|logout``: keep the API key of a server out of the environment and the config file.

As gh does: the key is stored for the server it belongs to (its base URL), in the system keyring where there is one
(the ``keyring`` package, the ``petstore[keyring]`` extra, with a backend that works: Secret Service, macOS
Keychain, Windows Credential Locker ...), else in ``<config dir>/credentials.json`` with mode 0600. A key given by a
flag, ``PETSTORE_API_KEY`` or the config file wins over the stored one (:func:`stored_key` is the last resort of
:func:`petstore_cli.compose.compose`). ``status`` says where the key is kept, never the key; ``login`` reads it from a
masked prompt, or from stdin when stdin is not a terminal (``petstore auth login < key.txt``), never from the
command line.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Protocol

from petstore_api.masking import mask_secret
from petstore_os import open_private

from .settings.paths import default_config_path

__all__ = ["FileStore", "KeyStore", "auth_main", "key_store", "stored_key"]

SERVICE = "petstore"
CREDENTIALS = "credentials.json"


class KeyStore(Protocol):
    """Where keys are kept, one per server (its base URL)."""

    def where(self) -> str: ...

    def get(self, server: str) -> str | None: ...

    def set(self, server: str, key: str) -> None: ...

    def delete(self, server: str) -> bool: ...


class FileStore:
    """``credentials.json`` (``{"keys": {base URL: key}}``), mode 0600, in the config directory."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def where(self) -> str:
        return f"the file {self.path} (mode 0600)"

    def _keys(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        keys = data.get("keys") if isinstance(data, dict) else None
        return {k: v for k, v in keys.items() if isinstance(v, str)} if isinstance(keys, dict) else {}

    def _write(self, keys: dict[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = open_private(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)  # 0600 before a byte of a key is in it
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            json.dump({"keys": keys}, file, indent=2)
            file.write("\n")

    def get(self, server: str) -> str | None:
        return self._keys().get(server)

    def set(self, server: str, key: str) -> None:
        self._write({**self._keys(), server: key})

    def delete(self, server: str) -> bool:
        keys = self._keys()
        if keys.pop(server, None) is None:
            return False
        self._write(keys)
        return True


class KeyringStore:
    """The system keyring, through the ``keyring`` package (service ``petstore``, one entry per base URL)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def where(self) -> str:
        return f"the system keyring ({self.name})"

    def get(self, server: str) -> str | None:
        import keyring

        return keyring.get_password(SERVICE, server)

    def set(self, server: str, key: str) -> None:
        import keyring

        keyring.set_password(SERVICE, server, key)

    def delete(self, server: str) -> bool:
        import keyring
        from keyring.errors import PasswordDeleteError

        try:
            keyring.delete_password(SERVICE, server)
        except PasswordDeleteError:
            return False
        return True


def key_store(config_dir: Path | None = None) -> KeyStore:
    """The system keyring when the extra is installed and a backend works, else the 0600 file."""
    from importlib.util import find_spec

    if find_spec("keyring") is not None:
        import keyring

        backend = keyring.get_keyring()
        if backend.priority > 0:  # keyring's "fail" backend (none available) has priority 0
            return KeyringStore(getattr(backend, "name", type(backend).__name__))
    return FileStore((config_dir or default_config_path().parent) / CREDENTIALS)


def stored_key(base_url: str, *, config_dir: Path | None = None) -> str | None:
    """The key ``petstore auth login`` stored for ``base_url``, if any (a broken keyring counts as none)."""
    try:
        return key_store(config_dir).get(base_url)
    except Exception:  # noqa: BLE001 - a keyring that fails (locked, no D-Bus) must not stop a face
        return None


def _read_key(server: str) -> str:
    if not sys.stdin.isatty():
        return sys.stdin.readline().strip()
    import getpass

    return getpass.getpass(f"API key for {server} (not shown): ").strip()


def auth_main(args: argparse.Namespace) -> int:
    """Entry point of ``petstore auth login|status|logout``."""
    from .faces import load
    from .settings.target import resolve_target

    loaded = load(args)
    target = resolve_target(loaded.settings)
    if target.sandbox or not target.base_url:
        print("petstore auth: the sandbox needs no key; choose a server with --env or --base-url", file=sys.stderr)
        return 2
    server, env = target.base_url, target.env
    config_dir = loaded.settings.config_path.parent if loaded.settings.config_path else None
    store = key_store(config_dir)
    if args.action == "login":
        key = _read_key(server)
        if not key or any(c.isspace() for c in key):
            print("petstore auth login: no key given (one line, no spaces); nothing stored", file=sys.stderr)
            return 2
        store.set(server, key)
        print(f"stored the key {mask_secret(key)} for {env} ({server}) in {store.where()}")
        return 0
    if args.action == "logout":
        if not store.delete(server):
            print(f"no key stored for {env} ({server}) in {store.where()}", file=sys.stderr)
            return 1
        print(f"removed the key for {env} ({server}) from {store.where()}")
        return 0
    return _status(store, server=server, env=env, given=target.api_key is not None)


def _status(store: KeyStore, *, server: str, env: str, given: bool) -> int:
    key = store.get(server)
    if key is None:
        print(f"{env} ({server}): no key stored in {store.where()}; petstore auth login stores one")
    else:
        print(f"{env} ({server}): key {mask_secret(key)} stored in {store.where()}")
    if given:
        print("in effect: the key of a flag, PETSTORE_API_KEY or the config file (it wins over a stored one)")
    return 0 if key is not None or given else 1
