"""The key sharing policy on matrix-nio's real olm machine (an in-memory store), devices added as a key query would:
trust on first use trusts each new device; verified-only trusts the listed device with a matching fingerprint and
blacklists the rest (they get no room keys)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from nio import AsyncClient, AsyncClientConfig
from nio.crypto import OlmDevice
from nio.store import SqliteMemoryStore

from petstore_bot.matrix_crypto import ENCRYPTION_ENABLED, Crypto, parse_device

pytestmark = pytest.mark.skipif(not ENCRYPTION_ENABLED, reason="matrix-nio without its e2e extra")


@pytest.fixture
def client() -> Iterator[AsyncClient]:
    config = AsyncClientConfig(encryption_enabled=True, store=SqliteMemoryStore)
    made = AsyncClient("http://127.0.0.1:9", "@petbot:test", device_id="BOTDEVICE", config=config)
    made.restore_login(user_id="@petbot:test", device_id="BOTDEVICE", access_token="not-used")
    assert made.olm is not None
    for user, device_id, key in (("@alice:test", "ALICE1", "aaaa"), ("@mallory:test", "MAL1", "mmmm")):
        device = OlmDevice(user, device_id, {"ed25519": key, "curve25519": key + "-c"})
        made.device_store.add(device)  # as nio's key query handling does: in memory and in the store
        made.olm.store.save_device_keys({user: {device_id: device}})
    yield made


def states(client: AsyncClient) -> dict[str, str]:
    assert client.olm is not None
    out = {}
    for device in client.device_store:
        verified, blacklisted = client.olm.is_device_verified(device), client.olm.is_device_blacklisted(device)
        out[device.id] = "verified" if verified else "blacklisted" if blacklisted else "unset"
    return out


def test_trust_on_first_use_trusts_every_device_it_sees(client: AsyncClient) -> None:
    Crypto().trust(client)
    assert states(client) == {"ALICE1": "verified", "MAL1": "verified"}


def test_verified_only_shares_with_the_listed_device_whose_fingerprint_matches(client: AsyncClient) -> None:
    Crypto(key_sharing="verified", verified_devices=["@alice:test ALICE1 aa aa"]).trust(client)
    assert states(client) == {"ALICE1": "verified", "MAL1": "blacklisted"}
    Crypto(key_sharing="verified", verified_devices=["@alice:test ALICE1 other-key"]).trust(client)
    assert states(client) == {"ALICE1": "blacklisted", "MAL1": "blacklisted"}, "a fingerprint that does not match"


def test_a_verified_device_entry_needs_user_device_and_fingerprint() -> None:
    with pytest.raises(ValueError, match="use '@user:example.org DEVICEID ED25519KEY'"):
        parse_device("ALICE1 aaaa")
