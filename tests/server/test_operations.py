"""Operations: /v1/healthz, JSON access logs that never hold the key, graceful shutdown."""

from __future__ import annotations

import json
import signal
import socket
import time
from urllib.parse import urlsplit

import httpx
import pytest

from .support import AUTH, KEY, assert_error, running_server


async def test_healthz_needs_no_key_and_checks_the_database(anon: httpx.AsyncClient) -> None:
    response = await anon.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}
    assert_error(await anon.get("/healthz?x=1"), 400, "bad_request")


async def test_healthz_is_503_when_the_database_does_not_answer(anon: httpx.AsyncClient, served, monkeypatch) -> None:
    async def down() -> None:
        raise OSError("connection refused: secret detail")

    monkeypatch.setattr(served, "health_check", down)
    body = assert_error(await anon.get("/healthz"), 503, "service_unavailable")
    assert "secret detail" not in body["message"]


@pytest.mark.slow
async def test_access_log_is_json_lines_without_the_key(db_target: str, tmp_path) -> None:
    log = tmp_path / "access.log"
    with running_server(db_target, "--access-log", str(log), keys=[KEY]) as (proc, url, _):
        async with httpx.AsyncClient(base_url=url, headers=AUTH) as http:
            await http.post("/pets", json={"name": "Rex", "categoryId": 1}, headers={"Idempotency-Key": "idem-7"})
            await http.get("/pets?limit=1")
            await http.get("/pets", headers={"Authorization": "Bearer sk-wrong-key"})
            await http.get("/healthz")
            await http.get(f"/pets?limit=2&api_key={KEY}")  # a key where none belongs: 400, and not logged
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    text = log.read_text()
    entries = [json.loads(line) for line in text.splitlines()]
    assert [(e["method"], e["path"], e["status"]) for e in entries] == [
        ("POST", "/v1/pets", 201),
        ("GET", "/v1/pets", 200),
        ("GET", "/v1/pets", 401),
        ("GET", "/v1/healthz", 200),
        ("GET", "/v1/pets", 400),
    ]
    assert entries[1]["query"] == "limit=1" and entries[1]["bytes"] > 0
    assert entries[4]["query"] == "limit=2&api_key=***"
    assert {"time", "duration_ms", "client", "pid"} <= set(entries[0])
    assert KEY not in text and "sk-wrong-key" not in text and "idem-7" not in text


def _refuses(url: str) -> bool:
    address = urlsplit(url)
    try:
        socket.create_connection((address.hostname, address.port), timeout=1).close()
    except OSError:
        return True
    return False


@pytest.mark.slow
def test_sigterm_finishes_the_request_in_flight(db_target: str) -> None:
    body = json.dumps({"name": "Late", "categoryId": 1}).encode()
    with running_server(db_target, keys=[KEY]) as (proc, url, _):
        address = urlsplit(url)
        with socket.create_connection((address.hostname, address.port), timeout=30) as conn:
            head = (
                f"POST /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nExpect: 100-continue\r\n\r\n"
            ).encode()
            conn.sendall(head)
            # uvicorn answers 100 Continue when the app first reads the body: the request is in flight.
            assert conn.recv(65536).startswith(b"HTTP/1.1 100 ")
            proc.send_signal(signal.SIGTERM)
            deadline = time.monotonic() + 20
            while not _refuses(url):  # the server stops accepting: it is shutting down
                assert time.monotonic() < deadline, "the server kept accepting after SIGTERM"
            conn.sendall(body)
            reply = b""
            while chunk := conn.recv(65536):
                reply += chunk
        assert reply.startswith(b"HTTP/1.1 201 "), reply[:200]
        assert proc.wait(timeout=20) == 0
