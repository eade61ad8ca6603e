"""The service over a real loopback socket: `python -m petstore_server` in a subprocess."""

from __future__ import annotations

import asyncio
import signal
import socket
from urllib.parse import urljoin, urlsplit

import httpx
import pytest

from .support import AUTH, KEY, running_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    db = tmp_path_factory.mktemp("socket") / "pets.db"
    with running_server(db, "--seed", keys=[KEY]) as (_, url, _):
        yield url


@pytest.fixture
async def http(server: str):
    async with httpx.AsyncClient(base_url=server, headers=AUTH, timeout=30) as client:
        yield client


async def test_every_operation_end_to_end(http: httpx.AsyncClient, server: str) -> None:
    assert server.startswith("http://127.0.0.1:") and server.endswith("/v1")
    created = await http.post("/pets", json={"name": "Sock", "categoryId": 3})
    assert created.status_code == 201
    got = await http.get(f"/pets/{created.json()['id']}")
    assert got.json() == created.json() and got.headers["sunset"] == "Thu, 05 Dec 2030 00:00:00 GMT"
    assert (await http.get("/store/orders")).json() == []
    assert (await http.get("/pets", headers={"Authorization": "Bearer nope"})).status_code == 401
    assert (await http.get("/pets/999999")).status_code == 404


async def test_link_is_relative_and_followable(http: httpx.AsyncClient, server: str) -> None:
    first = await http.get("/pets?limit=2&status=available")
    url = urljoin(str(first.url), first.headers["link"].split(">")[0][1:])
    assert url.startswith(f"{server}/pets?limit=2&status=available&cursor=")
    second = await http.get(url)
    assert second.status_code == 200 and second.json()[0]["id"] > first.json()[-1]["id"]


async def test_two_hundred_concurrent_creates_get_distinct_ids(http: httpx.AsyncClient) -> None:
    responses = await asyncio.gather(*(http.post("/pets", json={"name": f"c{i}", "categoryId": i}) for i in range(200)))
    assert {r.status_code for r in responses} == {201}
    ids = {r.json()["id"] for r in responses}
    assert len(ids) == 200
    for response in responses:
        assert (await http.get(f"/pets/{response.json()['id']}")).json() == response.json()


async def test_body_over_the_cap_is_413(http: httpx.AsyncClient) -> None:
    response = await http.post("/pets", json={"name": "x", "categoryId": 1, "pad": "p" * 20_000})
    assert response.status_code == 413 and response.json()["code"] == "payload_too_large"


def raw_exchange(server: str, request: bytes) -> bytes:
    """Send raw bytes; the reply received before the server closed (it may close while we send)."""
    address = urlsplit(server)
    chunks = []
    with socket.create_connection((address.hostname, address.port), timeout=30) as conn:
        try:
            conn.sendall(request)
            conn.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        try:
            while chunk := conn.recv(65536):
                chunks.append(chunk)
        except ConnectionResetError:
            pass
    return b"".join(chunks)


HOSTILE_REQUESTS = {
    "huge-header": b"GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 200_000 + b"\r\n\r\n",
    "many-headers": b"GET /v1/pets HTTP/1.1\r\nHost: x\r\n"
    + b"".join(b"X-%d: v\r\n" % i for i in range(5000))
    + b"\r\n",
    "huge-query": b"GET /v1/pets?" + b"q" * 100_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    "absurd-length": b"POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n",
    "garbage": b"GARBAGE\r\n\r\n",
}


@pytest.mark.parametrize("name", HOSTILE_REQUESTS)
def test_hostile_http_never_gets_a_5xx(server: str, name: str) -> None:
    """Answered 4xx (by uvicorn's parser or the app), or the connection is cut; the server lives on."""
    reply = raw_exchange(server, HOSTILE_REQUESTS[name])
    if reply:
        status = int(reply.split(b" ", 2)[1])
        assert 400 <= status < 500, reply[:200]
    assert raw_exchange(server, b"GET /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n").startswith(b"HTTP/1.1 401 ")


async def test_acknowledged_creates_survive_kill_9(db_target: str) -> None:
    db = db_target
    acknowledged: dict[int, dict] = {}
    with running_server(db, keys=[KEY]) as (proc, url, _):

        async def create(http: httpx.AsyncClient, i: int) -> None:
            try:
                response = await http.post("/pets", json={"name": f"d{i}", "categoryId": i})
            except httpx.HTTPError:
                return
            if response.status_code == 201:
                acknowledged[response.json()["id"]] = response.json()
                if len(acknowledged) == 150:
                    proc.send_signal(signal.SIGKILL)

        limits = httpx.Limits(max_connections=25)
        async with httpx.AsyncClient(base_url=url, headers=AUTH, limits=limits, timeout=30) as http:
            await asyncio.gather(*(create(http, i) for i in range(600)))
        assert proc.wait() == -signal.SIGKILL
    assert 150 <= len(acknowledged) < 600
    with running_server(db, keys=[KEY]) as (_, url, _):
        async with httpx.AsyncClient(base_url=url, headers=AUTH, timeout=30) as http:
            stored = await all_pets(http)
    for pet_id, pet in acknowledged.items():
        assert stored[pet_id] == pet


async def all_pets(http: httpx.AsyncClient) -> dict[int, dict]:
    pets: dict[int, dict] = {}
    url: str | None = "/pets?limit=100"
    while url:
        response = await http.get(url)
        pets.update((pet["id"], pet) for pet in response.json())
        link = response.headers.get("link")
        url = urljoin(str(response.url), link.split(">")[0][1:]) if link else None
    return pets


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_stops_cleanly(tmp_path, sig: int) -> None:
    with running_server(tmp_path / "p.db", keys=[KEY]) as (proc, _, _):
        proc.send_signal(sig)
        assert proc.wait(timeout=20) == 0
        assert "Traceback" not in proc.stderr.read()


async def test_without_keys_one_is_generated_and_printed_once(tmp_path) -> None:
    with running_server(tmp_path / "p.db", env={"PETSTORE_SERVER_API_KEYS": ""}) as (proc, url, before):
        assert len(before) == 1 and before[0].startswith("API key: sk-")
        key = before[0].removeprefix("API key: ")
        async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {key}"}) as http:
            assert (await http.get("/pets")).status_code == 200
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=20)
        assert key not in proc.stdout.read() + proc.stderr.read()


async def test_keys_from_the_environment(tmp_path) -> None:
    with running_server(tmp_path / "p.db", env={"PETSTORE_SERVER_API_KEYS": "k-one, k-two"}) as (
        _,
        url,
        before,
    ):
        assert before == []
        async with httpx.AsyncClient(base_url=url) as http:
            for key in ("k-one", "k-two"):
                assert (await http.get("/pets", headers={"Authorization": f"Bearer {key}"})).status_code == 200
