"""``petstore auth login|status|logout``: keep the API key of a server out of the environment and the config file.

The key is stored for the server it belongs to (:mod:`petstore_cli.settings.keystore`: the system keyring, else a
0600 file). ``PETSTORE_API_KEY``, ``api_key_file`` or the config file win over a stored key; no flag takes a key
(a command line is seen by every user of the host). ``login`` reads the key from a masked prompt, or from stdin when
stdin is not a terminal (``petstore auth login < key.txt``), checks it against the server with one request (as gh
checks a token) and stores it only if the server did not refuse it; ``status`` says where the key in effect comes
from, never the key, and checks it the same way.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Literal

from pydantic import SecretStr

from petstore_api.masking import mask_secret

from .settings.keystore import KeyStore, key_store

if TYPE_CHECKING:  # pragma: no cover
    from .settings.model import Settings

__all__ = ["Verdict", "auth_main", "check_key"]

#: What the server made of a key: it answered (accepted), refused it (401/403), or could not be asked.
Verdict = Literal["accepted", "refused", "unknown"]

#: Where a key given by other means than ``auth login`` comes from (they win over a stored one).
GIVEN = "PETSTORE_API_KEY, api_key_file or the config file"


def check_key(settings: Settings, *, server: str, key: SecretStr) -> tuple[Verdict, str]:
    """One request (``GET /pets?limit=1``, no retry) to ``server`` with ``key``: the verdict and its words."""
    import asyncio

    from bot_commands.errors import classify
    from petstore_api.client import PetStoreClient
    from petstore_api.errors import APIError, PetStoreError
    from petstore_api.policy import RetryPolicy

    async def ask() -> None:
        async with PetStoreClient(
            base_url=server,
            api_key=key,
            timeouts=settings.http.timeouts(),
            retry=RetryPolicy(attempts=1),
            allow_insecure_http=settings.http.allow_insecure_http,
        ) as client:
            await client.list_pets(limit=1)

    try:
        asyncio.run(ask())
    except APIError as exc:
        if exc.status in (401, 403):
            return "refused", f"the server refused it: {classify(exc).problem} (HTTP {exc.status})"
        return "unknown", f"not checked: {classify(exc).text.removeprefix('error: ')}"
    except PetStoreError as exc:
        return "unknown", f"not checked: {classify(exc).text.removeprefix('error: ')}"
    return "accepted", "the server accepted it (GET /pets: 200)"


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
    settings = loaded.settings
    target = resolve_target(settings)
    if target.sandbox or not target.base_url:
        print("petstore auth: the sandbox needs no key; choose a server with --env or --base-url", file=sys.stderr)
        return 2
    server, env = target.base_url, target.env
    store = key_store(settings.config_path.parent if settings.config_path else None)
    if args.action == "login":
        return _login(settings, store, server=server, env=env)
    if args.action == "logout":
        if not store.delete(server):
            print(f"no key stored for {env} ({server}) in {store.where()}", file=sys.stderr)
            return 1
        print(f"removed the key for {env} ({server}) from {store.where()}")
        return 0
    return _status(settings, store, server=server, env=env, given=target.api_key)


def _login(settings: Settings, store: KeyStore, *, server: str, env: str) -> int:
    key = _read_key(server)
    if not key or any(c.isspace() for c in key):
        print("petstore auth login: no key given (one line, no spaces); nothing stored", file=sys.stderr)
        return 2
    verdict, words = check_key(settings, server=server, key=SecretStr(key))
    if verdict == "refused":
        print(f"petstore auth login: {words}; the key {mask_secret(key)} was not stored", file=sys.stderr)
        return 1
    store.set(server, key)
    print(f"stored the key {mask_secret(key)} for {env} ({server}) in {store.where()}: {words}")
    return 0


def _status(settings: Settings, store: KeyStore, *, server: str, env: str, given: SecretStr | None) -> int:
    stored = store.get(server)
    if stored is None:
        print(f"{env} ({server}): no key stored in {store.where()}; petstore auth login stores one")
    else:
        print(f"{env} ({server}): key {mask_secret(stored)} stored in {store.where()}")
    if given is not None:
        print(f"in effect: the key {mask_secret(given)} of {GIVEN} (it wins over a stored one)")
    key = given if given is not None else (SecretStr(stored) if stored is not None else None)
    if key is None:
        return 1
    verdict, words = check_key(settings, server=server, key=key)
    print(f"checked: {words}")
    return 0 if verdict == "accepted" else 1
