"""A browser that vanishes without closing its socket (a sleeping laptop, a dropped network) is noticed by the
websocket heartbeat: its session ends and its app process with it. In-process, with a short heartbeat."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from aiohttp import WSMsgType, web
from web_support import TOKEN, client, environment, wait_gone

from petstore_web.access import owner
from petstore_web.server import WebOptions, WebServer

pytestmark = pytest.mark.slow


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[WebServer]:
    options = WebOptions(
        host="127.0.0.1",
        port=0,
        people=owner(TOKEN),
        argv=(sys.executable, "-m", "petstore_cli", "tui"),
        env=environment(tmp_path),
        heartbeat=0.5,
    )
    served = WebServer(options)
    runner = web.AppRunner(served.application(), access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    served.port = runner.addresses[0][1]
    try:
        yield served
    finally:
        await served.close()
        await runner.cleanup()


async def until(check: Callable[[], bool], *, deadline: float = 30.0) -> None:
    end = time.monotonic() + deadline
    while not check():
        assert time.monotonic() < end, "not within the deadline"
        await asyncio.sleep(0.05)


async def test_a_browser_gone_silent_ends_its_session_and_its_app(server: WebServer) -> None:
    base = f"http://127.0.0.1:{server.port}"
    async with client() as http:
        await http.post(f"{base}/login", data={"token": TOKEN})
        socket = await http.ws_connect(f"ws://127.0.0.1:{server.port}/ws?width=100&height=30", autoping=False)
        first = await asyncio.wait_for(socket.receive(), 30)
        while first.type is WSMsgType.PING:  # on busy cores the heartbeat comes before the app's first frame:
            await socket.pong(first.data)  # the browser is alive until the app draws, so the session waits for it
            first = await asyncio.wait_for(socket.receive(), 30)
        assert first.data  # the app is up and drawing
        [app] = server.sessions.apps
        pid = app.pid
        assert pid is not None
        # From here the browser answers nothing, not even the server's pings.
        await until(lambda: not server.sessions.apps)
        assert wait_gone(pid, timeout=10)
        assert not server.sockets
        await socket.close()
