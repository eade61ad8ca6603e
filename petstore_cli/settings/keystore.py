"""Where ``petstore auth login`` keeps a server's API key, and the key it stored for the server the settings point at.

As gh does: the key is stored for the server it belongs to (its base URL), in the system keyring where there is one
(the ``keyring`` package, the ``petstore[keyring]`` extra, with a backend that works: Secret Service, macOS
Keychain, Windows Credential Locker ...), else in ``<config dir>/credentials.json`` with mode 0600. It is the last
source of a key: ``PETSTORE_API_KEY``, ``api_key_file`` or the config file win over it (no flag takes a key: a
command line is seen by every user of the host). :func:`stored_key_for` is that rule, read by ``compose`` (the key a
face uses) and by ``petstore config show`` (the key shown masked, with where it is kept).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Protocol

from pydantic import SecretStr

from petstore_os import open_private
from petstore_os.records import record

from .model import Settings
from .paths import default_config_path
from .target import Target

__all__ = ["FileStore", "KeyStore", "KeyringStore", "StoredKey", "key_store", "stored_key_for"]

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


@record
class StoredKey:
    """The key ``petstore auth login`` stored for a server, and the store's words for where it is kept."""

    key: SecretStr
    where: str

    def __repr__(self) -> str:  # never show the key
        return f"StoredKey(where={self.where!r})"


def stored_key_for(settings: Settings, target: Target) -> StoredKey | None:
    """The stored key of ``target``'s server, when no other source gives one (the sandbox needs none)."""
    if target.api_key is not None or target.sandbox or not target.base_url:
        return None
    config_dir = settings.config_path.parent if settings.config_path else None
    try:
        store = key_store(config_dir)
        key = store.get(target.base_url)
        where = store.where()
    except Exception:  # noqa: BLE001 - a keyring that fails (locked, no D-Bus) must not stop a face
        return None
    return StoredKey(SecretStr(key), where) if key else None
