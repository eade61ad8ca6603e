"""Clients cannot exhaust ``petstore serve``: whole-head and whole-body deadlines, idle keep-alive connections closed,
a cap on open connections past which a new one gets a 503 and is closed at once. A real server process, raw
sockets."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from .support import AUTH, KEY, running_server

pytestmark = pytest.mark.slow

LIVEZ = b"GET /v1/livez HTTP/1.1\r\nHost: x\r\n\r\n"


def address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    assert parts.hostname and parts.port
    return parts.hostname, parts.port


def closed_by_server(conn: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a hang fails on the socket's timeout)."""
    received = b""
    while chunk := conn.recv(65536):
        received += chunk
    return received


@pytest.fixture(scope="module")
def strict_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    db = tmp_path_factory.mktemp("limits") / "p.db"
    args = ("--head-timeout", "1", "--body-timeout", "1", "--keep-alive-timeout", "1", "--no-access-log")
    with running_server(db, *args, keys=[KEY]) as (_, url, _):
        yield address(url)


BODY = b'{"name": "Slow", "categoryId": 1}'


def create_head(length: int = len(BODY), *, close: bool = False) -> bytes:
    return (
        b"POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + (b"Connection: close\r\n" if close else b"")
        + f"Authorization: {AUTH['Authorization']}\r\nContent-Length: {length}\r\n\r\n".encode()
    )


def pet_names(where: tuple[str, int]) -> list[str]:
    with socket.create_connection(where, timeout=30) as conn:
        conn.sendall(b"GET /v1/pets?limit=100 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n")
        conn.sendall(f"Authorization: {AUTH['Authorization']}\r\n\r\n".encode())
        reply = closed_by_server(conn)
    assert reply.startswith(b"HTTP/1.1 200 ")
    return [pet["name"] for pet in json.loads(reply.partition(b"\r\n\r\n")[2])]


def test_a_client_that_sends_nothing_is_closed(strict_server: tuple[str, int]) -> None:
    with socket.create_connection(strict_server, timeout=30) as conn:
        assert closed_by_server(conn) == b""


def test_the_deadline_is_for_the_whole_head_not_each_read(strict_server: tuple[str, int]) -> None:
    """A header every 0.2 s keeps each read well inside the 1 s limit; the head as a whole is still cut off."""
    with socket.create_connection(strict_server, timeout=30) as conn:
        conn.sendall(b"GET /v1/livez HTTP/1.1\r\nHost: x\r\n")
        sent = 0
        try:
            while sent < 200:  # 40 s of headers, if the server allowed it
                conn.sendall(b"X-Slow: 1\r\n")
                sent += 1
                time.sleep(0.2)  # the slow client itself, not a wait for the server
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert sent < 200, "the server took a 40 s head"
        assert b"200 OK" not in closed_by_server(conn)


def test_a_body_that_never_comes_is_cut_off(strict_server: tuple[str, int]) -> None:
    with socket.create_connection(strict_server, timeout=30) as conn:
        conn.sendall(create_head() + BODY[:10])  # the head, then a body that stops
        assert b"HTTP/1.1 201 " not in closed_by_server(conn)
    assert "Slow" not in pet_names(strict_server)


def test_the_body_deadline_is_for_the_whole_body_not_each_read(strict_server: tuple[str, int]) -> None:
    """A byte every 0.2 s keeps each read well inside the 1 s limit; the body as a whole is still cut off."""
    body = b'{"name": "Slow", "categoryId": 1, "status": "available"}' + b" " * 150
    with socket.create_connection(strict_server, timeout=30) as conn:
        conn.sendall(create_head(len(body)))
        sent = 0
        try:
            while sent < len(body):  # 40 s of body, if the server allowed it
                conn.sendall(body[sent : sent + 1])
                sent += 1
                time.sleep(0.2)  # the slow client itself, not a wait for the server
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert sent < len(body), "the server took a 40 s body"
        assert b"HTTP/1.1 201 " not in closed_by_server(conn)
    assert "Slow" not in pet_names(strict_server)


def test_a_body_sent_after_its_head_in_time_is_answered(strict_server: tuple[str, int]) -> None:
    body = b'{"name": "On time", "categoryId": 1}'
    with socket.create_connection(strict_server, timeout=30) as conn:
        conn.sendall(create_head(len(body), close=True))
        conn.sendall(body[:5])
        conn.sendall(body[5:])
        reply = closed_by_server(conn)
    assert reply.startswith(b"HTTP/1.1 201 ")
    assert json.loads(reply.partition(b"\r\n\r\n")[2])["name"] == "On time"


def test_a_whole_request_is_answered_and_an_idle_connection_closed(strict_server: tuple[str, int]) -> None:
    with socket.create_connection(strict_server, timeout=30) as conn:
        conn.sendall(LIVEZ)
        reply = closed_by_server(conn)  # answered, kept alive, then closed when idle
    assert reply.startswith(b"HTTP/1.1 200 ") and reply.endswith(b'{"status":"ok"}')


def test_past_the_cap_a_connection_gets_503_and_is_closed(tmp_path) -> None:
    with running_server(tmp_path / "p.db", "--max-connections", "3", "--no-access-log", keys=[KEY]) as (_, url, _):
        where = address(url)
        held = [socket.create_connection(where, timeout=30) for _ in range(3)]
        try:
            for conn in held:  # each is open (answered) before the next one comes
                conn.sendall(LIVEZ)
                assert conn.recv(65536).startswith(b"HTTP/1.1 200 ")
            with socket.create_connection(where, timeout=30) as extra:
                refused = closed_by_server(extra)
            head, _, body = refused.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 503 ") and b"retry-after: 1" in head and b"connection: close" in head
            assert json.loads(body) == {
                "code": "service_unavailable",
                "message": "too many open connections; try again shortly",
                "status": 503,
            }
        finally:
            for conn in held:
                conn.close()
        deadline = time.monotonic() + 20
        while True:  # the server sees the three go; then connections are served again
            with socket.create_connection(where, timeout=30) as conn:
                conn.sendall(LIVEZ)
                if conn.recv(65536).startswith(b"HTTP/1.1 200 "):
                    break
            assert time.monotonic() < deadline, "still refused after the held connections closed"


def test_requests_read_into_the_reused_buffer_stay_whole(strict_server: tuple[str, int]) -> None:
    """The server reads into one buffer per thread, reused: two requests in one write, a create whose body is cut
    across writes and a last request are each answered as sent (a read handed on with the wrong length, or not
    handed on, would lose or mangle one)."""
    name = "Big " + "n" * 60
    body = json.dumps({"name": name, "categoryId": 2}).encode()
    with socket.create_connection(strict_server, timeout=10) as conn:
        conn.sendall(LIVEZ * 2 + create_head(len(body)) + body[:7])
        conn.sendall(body[7:])
        auth = f"Authorization: {AUTH['Authorization']}\r\n".encode()
        conn.sendall(b"GET /v1/pets?limit=1 HTTP/1.1\r\nHost: x\r\n" + auth + b"Connection: close\r\n\r\n")
        answers = closed_by_server(conn)
    assert answers.count(b"HTTP/1.1 200 OK") == 3 and answers.count(b"HTTP/1.1 201 Created") == 1
    assert f'"name":"{name}"'.encode() in answers
