"""SIGTERM drains ``petstore serve --workers 2``: the requests in flight are answered, new connections are refused
at once, then the supervisor exits 0, no worker is left and the port is free. A real server process, raw sockets."""

from __future__ import annotations

import json
import signal
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from petstore_server.store import PetStore

from .support import AUTH, KEY, descendants, running_server
from .test_orphans import alive, wait_exit

pytestmark = pytest.mark.slow


def body(number: int) -> bytes:
    return json.dumps({"name": f"In flight {number}", "categoryId": 1}).encode()


def start_create(where: tuple[str, int], number: int) -> socket.socket:
    """A create whose head and half its body are sent, in the app (it asked for the body: ``100 Continue``)."""
    conn = socket.create_connection(where, timeout=30)
    data = body(number)
    conn.sendall(
        b"POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
        + f"Authorization: {AUTH['Authorization']}\r\nContent-Length: {len(data)}\r\n\r\n".encode()
        + data[:10]
    )
    assert conn.recv(65536).startswith(b"HTTP/1.1 100 ")
    return conn


def refused(where: tuple[str, int]) -> bool:
    """True when a new connection is refused, or reset before any answer; False when it is answered."""
    try:
        with socket.create_connection(where, timeout=30) as conn:
            conn.sendall(b"GET /v1/livez HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return conn.recv(65536) == b""
    except (ConnectionRefusedError, ConnectionResetError):
        return True


def test_sigterm_answers_requests_in_flight_and_refuses_new_ones(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    args = ("--workers", "2", "--body-timeout", "120", "--no-access-log")
    with running_server(db, *args, keys=[KEY]) as (proc, url, _):
        parts = urlsplit(url)
        where = (parts.hostname or "", parts.port or 0)
        in_flight = [start_create(where, number) for number in range(6)]
        workers = descendants(proc.pid)
        assert len(workers) >= 2
        proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 20
        while not refused(where):
            assert time.monotonic() < deadline, "still taking new connections 20 s after SIGTERM"
        replies = []
        for number, conn in enumerate(in_flight):
            with conn:
                conn.sendall(body(number)[10:])
                received = b""
                while chunk := conn.recv(65536):  # the worker closes it once answered
                    received += chunk
                replies.append(received)
        assert proc.wait(timeout=60) == 0
        for pid in workers:
            assert wait_exit(pid, timeout=30), f"worker {pid} still runs"
    for number, reply in enumerate(replies):  # each answered, then closed (the loop above ended)
        head, _, answer = reply.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 201 "), reply
        assert json.loads(answer)["name"] == f"In flight {number}"
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(where)  # the port is free: a restart can listen on it
    assert not any(alive(pid) for pid in workers)
    pets = PetStore(db)
    try:
        names = {pet["name"] for pet in json.loads(pets.list_page(limit=100).body)}
    finally:
        pets.close()
    assert names == {f"In flight {number}" for number in range(6)}
