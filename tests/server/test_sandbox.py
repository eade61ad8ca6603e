"""The embedded sandbox: key file 0600, seeding, reset determinism, works without lifespan."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys

import httpx

from petstore_server.sandbox import KEY_PREFIX, Sandbox
from petstore_server.store import SAMPLE_PETS

from .support import REPO


async def list_all(sandbox: Sandbox) -> list[dict]:
    transport = httpx.ASGITransport(app=sandbox.app)
    headers = {"Authorization": f"Bearer {sandbox.api_key}"}
    async with httpx.AsyncClient(transport=transport, base_url="http://sandbox/v1", headers=headers) as http:
        response = await http.get("/pets?limit=100")
    assert response.status_code == 200
    return response.json()


async def add(sandbox: Sandbox, name: str) -> None:
    transport = httpx.ASGITransport(app=sandbox.app)
    headers = {"Authorization": f"Bearer {sandbox.api_key}"}
    async with httpx.AsyncClient(transport=transport, base_url="http://sandbox/v1", headers=headers) as http:
        assert (await http.post("/pets", json={"name": name, "categoryId": 1})).status_code == 201


async def test_first_open_creates_key_and_seeds(tmp_path) -> None:
    data_dir = tmp_path / "deep" / "data"
    with Sandbox.open(data_dir) as sandbox:
        key_file = data_dir / "api-key"
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        assert key_file.read_text().strip() == sandbox.api_key
        assert sandbox.api_key.startswith(KEY_PREFIX) and len(sandbox.api_key) > len(KEY_PREFIX) + 30
        assert sandbox.db_path == data_dir / "sandbox.db" and sandbox.db_path.exists()
        pets = await list_all(sandbox)
    assert [(p["id"], p["name"], p["categoryId"], p["status"]) for p in pets] == list(SAMPLE_PETS)
    assert len(pets) == 12 and {p["status"] for p in pets} == {"available", "pending", "sold"}


async def test_reopen_keeps_key_and_data(tmp_path) -> None:
    with Sandbox.open(tmp_path) as first:
        await add(first, "Fido")
        key = first.api_key
    with Sandbox.open(tmp_path) as again:
        assert again.api_key == key
        names = [p["name"] for p in await list_all(again)]
    assert names.count("Fido") == 1 and len(names) == 13


async def test_reset_restores_the_same_initial_data(tmp_path) -> None:
    with Sandbox.open(tmp_path / "a") as fresh:
        initial = await list_all(fresh)
        await add(fresh, "Fido")
    with Sandbox.open(tmp_path / "a", reset=True) as reset:
        assert await list_all(reset) == initial
        await add(reset, "Fido")
        after_reset = await list_all(reset)
    with Sandbox.open(tmp_path / "b") as other:
        await add(other, "Fido")
        assert await list_all(other) == after_reset


def test_loose_key_file_is_tightened_and_empty_one_replaced(tmp_path) -> None:
    key_file = tmp_path / "api-key"
    key_file.write_text("sk-sandbox-existing\n")
    key_file.chmod(0o644)
    with Sandbox.open(tmp_path) as sandbox:
        assert sandbox.api_key == "sk-sandbox-existing"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key_file.write_text("")
    with Sandbox.open(tmp_path) as sandbox:
        assert sandbox.api_key.startswith(KEY_PREFIX) and sandbox.api_key != "sk-sandbox-existing"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600


def test_a_sandbox_made_by_an_earlier_version_keeps_working(tmp_path) -> None:
    """Its database at schema 1 (one Idempotency-Key table for every API key): upgraded, pets kept, writes work."""
    from .test_backends import LEGACY_LAYOUT

    sandbox = tmp_path / "data" / "petstore" / "sandbox"
    sandbox.mkdir(parents=True)
    (sandbox / "api-key").write_text("sk-sandbox-from-an-earlier-version\n")
    with sqlite3.connect(sandbox / "sandbox.db") as conn:
        conn.executescript(LEGACY_LAYOUT + "CREATE TABLE schema_version (version INTEGER NOT NULL);")
        conn.execute("INSERT INTO schema_version VALUES (1)")
        conn.executemany("INSERT INTO pets VALUES (?, ?, ?, ?)", SAMPLE_PETS)
        conn.execute("INSERT INTO idempotency VALUES ('k', 'f', 201, '{}', 1e12)")
    conn.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    env.update(XDG_DATA_HOME=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "config"))
    ran = subprocess.run(
        [sys.executable, "-m", "petstore_cli", "run", "--json", "-c", "/add Rex --category 1", "-c", "/list --all"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    added, listed = (json.loads(line) for line in ran.stdout.splitlines())
    assert added["result"]["id"] == 13 and len(listed["result"]) == 13
