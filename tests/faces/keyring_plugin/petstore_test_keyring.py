"""A keyring backend for the tests of ``petstore auth`` (keyring's public plugin API, chosen through
``PYTHON_KEYRING_BACKEND``): entries in a JSON file named by ``PETSTORE_TEST_KEYRING``, as a system keyring would
keep them outside petstore's config directory."""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class TestKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]
    name = "test keyring"  # type: ignore[assignment]

    def _path(self) -> Path:
        return Path(os.environ["PETSTORE_TEST_KEYRING"])

    def _entries(self) -> dict[str, str]:
        try:
            return dict(json.loads(self._path().read_text()))
        except OSError:
            return {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._entries().get(f"{service} {username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        self._path().write_text(json.dumps({**self._entries(), f"{service} {username}": password}))

    def delete_password(self, service: str, username: str) -> None:
        entries = self._entries()
        if entries.pop(f"{service} {username}", None) is None:
            raise PasswordDeleteError(username)
        self._path().write_text(json.dumps(entries))
