"""The access log writes the lines of the requests answered in one turn of the event loop together, in writes of
whole lines no larger than ``PIPE_BUF`` (atomic on a pipe that several workers share), and loses none."""

from __future__ import annotations

import asyncio
import json
import select
import socket

from starlette.types import Receive, Scope, Send

from petstore_server.accesslog import AccessLog
from petstore_server.observed import Observed


async def answer(scope: Scope, receive: Receive, send: Send) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"[]"})


def request(number: int) -> Scope:
    return {
        "type": "http",
        "method": "GET",
        "path": f"/v1/pets/{number}",
        "query_string": b"limit=20&key=sk-secret",
        "headers": [(b"authorization", b"Bearer sk-secret")],
        "client": ("127.0.0.1", 40000 + number),
    }


async def nothing() -> dict[str, object]:
    return {"type": "http.request", "body": b"", "more_body": False}


async def ignore(message: dict[str, object]) -> None:
    pass


async def test_lines_go_out_together_in_whole_writes_no_larger_than_pipe_buf() -> None:
    # One message per write: SOCK_SEQPACKET keeps the boundaries of each write the log makes.
    reader, writer = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with reader, writer:
        log = AccessLog(fd=writer.fileno(), flush_every=0.05)
        app = Observed(answer, log=log)
        await asyncio.gather(*(app(request(number), nothing, ignore) for number in range(100)))
        await asyncio.sleep(0)
        assert not select.select([reader], [], [], 0)[0], "written before their time was up"
        reader.setblocking(False)
        writes = [await asyncio.wait_for(asyncio.get_running_loop().sock_recv(reader, 65536), timeout=5)]
        while select.select([reader], [], [], 0)[0]:  # one flush wrote them all
            writes.append(reader.recv(65536))
    assert 1 < len(writes) < 100  # together, and more than PIPE_BUF in all
    assert all(len(chunk) <= select.PIPE_BUF and chunk.endswith(b"\n") for chunk in writes)
    lines = [json.loads(line) for chunk in writes for line in chunk.decode().splitlines()]
    assert [line["path"] for line in lines] == [f"/v1/pets/{number}" for number in range(100)]
    assert all(line["query"] == "limit=20&key=***" and line["status"] == 200 for line in lines)
    assert not any("sk-secret" in chunk.decode() for chunk in writes)


async def test_a_line_not_yet_written_is_written_by_flush() -> None:
    reader, writer = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with reader, writer:
        log = AccessLog(fd=writer.fileno())
        await Observed(answer, log=log)(request(1), nothing, ignore)
        log.flush()  # as the worker does when it stops
        assert json.loads(reader.recv(65536))["path"] == "/v1/pets/1"


async def test_lines_piling_up_are_written_without_waiting() -> None:
    reader, writer = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with reader, writer:
        log = AccessLog(fd=writer.fileno(), flush_every=60)
        app = Observed(answer, log=log)
        await asyncio.gather(*(app(request(number), nothing, ignore) for number in range(600)))
        writes = []
        while select.select([reader], [], [], 0)[0]:
            writes.append(reader.recv(65536))
        lines = [line for chunk in writes for line in chunk.decode().splitlines()]
        assert len(lines) == 512, "the first 512 lines are written at once, the rest wait for their time"
        log.flush()
