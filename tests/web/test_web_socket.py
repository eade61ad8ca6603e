"""``petstore web`` through HTTP and its websocket, no browser: the login gate, the first frame, keys, the limit.

One real server (the CLI, on 127.0.0.1, limit 2) serves the module; SIGTERM is tried on a server of its own.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from web_support import (
    TOKEN,
    Screen,
    Served,
    children,
    client,
    run_web,
    secret_file,
    wait_gone,
    web_server,
)

pytestmark = pytest.mark.slow
PETS = ("Goldie", "Luna")  # sample pets of a fresh sandbox


#: A package of the same name as ours in the server's working directory: an app process that imported from there
#: (``python -m`` puts the working directory first on sys.path) would leave the marker and never show the TUI.
SHADOW = "import pathlib, sys\npathlib.Path('imported-from-cwd').touch()\nsys.exit(3)\n"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The server's working directory, holding SHADOW as ``petstore_cli``."""
    cwd = tmp_path_factory.mktemp("cwd")
    (cwd / "petstore_cli").mkdir()
    (cwd / "petstore_cli" / "__init__.py").write_text(SHADOW)
    (cwd / "petstore_cli" / "__main__.py").write_text(SHADOW)
    return cwd


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, workdir: Path) -> Iterator[Served]:
    with web_server(tmp_path_factory.mktemp("web"), "--max-sessions", "2", cwd=workdir) as server:
        yield server


async def test_without_logging_in_401_everywhere_and_no_process(served: Served) -> None:
    async with client() as http:
        for path in ("/", "/static/js/textual.js", "/static/css/xterm.css", "/ws", "/download/x", "/nothing"):
            async with http.get(served.base + path, allow_redirects=False) as response:
                assert response.status == 401, path
                text = await response.text()
                assert ('<form method="post" action="/login">' if path == "/" else "Log in first") in text
        for cookie in (TOKEN, TOKEN[:-1] + "x"):  # the token itself is not the cookie
            http.cookie_jar.update_cookies({f"petstore_web_{served.port}": cookie})
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(served.ws)
            assert refused.value.status == 401
    assert children(served.proc.pid) == []


async def test_a_token_in_the_address_is_refused_even_the_right_one(served: Served) -> None:
    """An address lands in proxy logs and browser history: ``?token=`` is 400 and sets no cookie."""
    async with client() as http:
        for path in ("/?token=wrong-token-0123456789", f"/?token={TOKEN}", f"/static/js/textual.js?token={TOKEN}"):
            async with http.get(served.base + path, allow_redirects=False) as response:
                assert response.status == 400, path
                assert "Set-Cookie" not in response.headers
                assert "The token goes in the login form" in await response.text()
        assert len(http.cookie_jar) == 0


async def test_the_login_form_sets_a_cookie_naming_the_person(served: Served) -> None:
    async with client() as http:
        for origin in ("http://127.0.0.1:1", "http://evil.example", "null"):  # login CSRF: a page elsewhere
            async with http.post(
                served.base + "/login", data={"token": TOKEN}, headers={"Origin": origin}, allow_redirects=False
            ) as response:
                assert response.status == 403 and "Set-Cookie" not in response.headers
        async with http.post(
            served.base + "/login", data={"token": TOKEN[:-1] + "x"}, headers={"Origin": served.base}
        ) as response:
            assert response.status == 401 and "That token is not known here" in await response.text()
            assert "Set-Cookie" not in response.headers
        async with http.post(
            served.base + "/login", data={"token": TOKEN}, headers={"Origin": served.base}, allow_redirects=False
        ) as response:
            assert response.status == 303 and response.headers["Location"] == "/"
            cookie = response.headers["Set-Cookie"]
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
            assert "Secure" not in cookie  # plain HTTP, no trusted proxy
            assert TOKEN not in cookie  # the cookie names the person; it is not the token
        async with http.get(served.base + "/") as page:
            assert page.status == 200 and 'class="textual-terminal"' in await page.text()
        async with http.get(served.base + "/static/js/textual.js") as asset:
            assert asset.status == 200
        for origin in ("http://127.0.0.1:1", "http://evil.example"):  # a page elsewhere, even on this host
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(served.ws, headers={"Origin": origin})
            assert refused.value.status == 403
    assert children(served.proc.pid) == []  # a page starts no app: its websocket does


async def test_a_session_shows_the_pets_takes_keys_and_ends_with_its_socket(served: Served, workdir: Path) -> None:
    async with client() as http:
        await served.login(http)
        socket = await http.ws_connect(served.ws)
        screen = Screen(socket)
        await screen.until(*PETS, "› /list --limit 20")  # the session's own list, not only the preview's rows
        [app] = children(served.proc.pid)
        await socket.send_json(["stdin", "3"])  # the Pending tab
        await screen.until("Tweety", "Cleo", "3 pets with status pending")
        await socket.send_json(["stdin", "/"])  # to the prompt, which starts the line with "/"
        await screen.until("esc To list")  # the prompt's keys in the footer: it has the focus
        await socket.send_json(["stdin", "list sold --limit 2\r"])
        await screen.until("2 pets with status sold")
        await socket.close()  # the server answers the close once the app has ended
        assert children(served.proc.pid) == []
    assert wait_gone(app, timeout=0)
    assert not (workdir / "imported-from-cwd").exists()  # the app ran our petstore_cli, not the working dir's


@pytest.mark.parametrize("end", ["ctrl+q", "crash"])
async def test_an_app_that_ends_ends_its_session(served: Served, end: str) -> None:
    async with client() as http:
        await served.login(http)
        socket = await http.ws_connect(served.ws)
        await Screen(socket).until(*PETS)
        [app] = children(served.proc.pid)
        if end == "crash":
            os.kill(app, signal.SIGKILL)
        else:
            await socket.send_json(["stdin", "\x11"])
        message = await asyncio.wait_for(socket.receive(), 30)
        while message.type == aiohttp.WSMsgType.BINARY:  # the last frames, then the server closes
            message = await asyncio.wait_for(socket.receive(), 30)
        assert message.type == aiohttp.WSMsgType.CLOSE
        await socket.close()
    assert wait_gone(app)
    assert children(served.proc.pid) == []


async def test_the_session_limit_holds(served: Served) -> None:
    async with client() as http:
        await served.login(http)
        sockets = [await http.ws_connect(served.ws) for _ in range(2)]
        for socket in sockets:
            await Screen(socket).until(*PETS)
        assert len(children(served.proc.pid)) == 2
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(served.ws)
        assert refused.value.status == 503
        async with http.get(served.base + "/") as page:
            assert page.status == 503 and "at most 2 TUI sessions" in await page.text()
        assert len(children(served.proc.pid)) == 2
        await sockets[0].close()
        assert len(children(served.proc.pid)) == 1
        again = await http.ws_connect(served.ws)  # a slot is free again
        await Screen(again).until(*PETS)
        for socket in (again, sockets[1]):
            await socket.close()
    assert served.token not in served.text().split("\n", 1)[1]  # printed once, never logged


async def test_play_runs_in_each_session_and_sigterm_ends_the_server_and_every_app(tmp_path: Path) -> None:
    script = tmp_path / "demo.pets"
    script.write_text("/list sold --limit 2\n/get 4\n")
    with web_server(tmp_path, "--play", str(script), "--delay", "0") as server:
        async with client() as http:
            await server.login(http)
            sockets = [await http.ws_connect(server.ws) for _ in range(2)]
            for socket in sockets:  # each session plays the script on its own
                await Screen(socket).until("Script finished", "2 commands played")
            apps = children(server.proc.pid)
            assert len(apps) == 2
            server.proc.send_signal(signal.SIGTERM)
            assert server.proc.wait(timeout=10) == 0
            assert all(wait_gone(app, timeout=0.5) for app in apps)
            for socket in sockets:
                await socket.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--host", "0.0.0.0"], "petstore: 0.0.0.0 is beyond loopback; add --allow-remote"),
        (["--token-file", "/nonexistent/token"], "petstore: cannot read token file /nonexistent/token"),
        (["--play", "/nonexistent/demo.pets"], "petstore: cannot read script /nonexistent/demo.pets"),
        (["--max-sessions", "0"], "must be a whole number from 1 to 100"),
        (["--theme", "neon"], "petstore: unknown theme 'neon'; one of: "),
        (["--env", "custom"], "petstore: environment 'custom' needs a base URL"),
    ],
)
def test_bad_options_one_line_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    done = run_web(tmp_path, *args)
    assert done.returncode == 2 and done.stdout == ""
    assert message in done.stderr and "Traceback" not in done.stderr
    if "--max-sessions" not in args:  # argparse: its usage, then the line
        assert done.stderr.count("\n") == 1


def test_a_short_token_file_is_refused(tmp_path: Path) -> None:
    token = secret_file(tmp_path / "token", "short\n")
    done = run_web(tmp_path, "--token-file", str(token))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "at least 16" in done.stderr
