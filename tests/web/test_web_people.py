"""``petstore web --tokens FILE`` through HTTP and its websocket: each person is an actor with a role, audited; a
browser session touches none of the server's files (``/history save`` is a download); the headers and cookie flags.

One real server (the CLI, three people) serves the module; the forwarded-proto cases start one of their own.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import aiohttp
import pytest
from web_support import (
    PEOPLE,
    Screen,
    Served,
    audit_lines,
    client,
    run_web,
    tokens_text,
    web_server,
)

pytestmark = pytest.mark.slow


async def session_of(http: aiohttp.ClientSession, people: Served, name: str) -> Screen:
    """``name`` logged in, a session open, ``/whoami`` run from the prompt (which keeps the focus): the actor and
    role the server gave."""
    await people.login(http, PEOPLE[name][1])
    screen = Screen(await http.ws_connect(people.ws))
    await screen.until("› /list --limit 20")
    await screen.socket.send_json(["stdin", "/"])  # to the prompt, which starts the line with "/"
    await screen.until("esc To list")
    await typed(screen, "whoami", f"web:{name}", PEOPLE[name][0])
    return screen


async def typed(screen: Screen, line: str, *needles: str) -> str:
    await screen.socket.send_json(["stdin", line + "\r"])
    return await screen.until(*needles)


async def test_two_tokens_two_actors_each_audited(people: Served, people_home: Path) -> None:
    async with client() as alice_http, client() as bob_http:
        alice = await session_of(alice_http, people, "alice")
        bob = await session_of(bob_http, people, "bob")
        await typed(alice, "/add Alices --category 2", "Created #")
        await typed(bob, "/add Bobs --category 2", "/add needs the operator role; you have viewer")
        for screen in (alice, bob):
            await screen.socket.close()
    lines = audit_lines(people_home)  # on by default: the data dir's audit.ndjson, as for the bots
    mine = {(line["actor"], line["role"], line["where"], line["outcome"], line["applied"]) for line in lines}
    assert ("web:alice", "operator", "web", "ok", "yes") in mine
    assert ("web:bob", "viewer", "web", "refused", "no") in mine
    assert all(line["actor"] in ("web:alice", "web:bob") for line in lines)
    assert stat.S_IMODE((people_home / "data" / "petstore" / "audit.ndjson").stat().st_mode) == 0o600


async def test_no_role_no_pets_not_even_the_first_frame_preview(people: Served) -> None:
    """The first page is fetched by a child process while the TUI starts: as the session's person too."""
    async with client() as http:
        await people.login(http, PEOPLE["carol"][1])
        screen = Screen(await http.ws_connect(people.ws))
        shown = await screen.until("/list needs the viewer role; you have none")
        assert "Goldie" not in shown and "Luna" not in shown
        await screen.socket.close()


async def test_history_save_writes_nothing_on_the_server_and_is_a_download(people: Served, people_home: Path) -> None:
    planted = people_home / "planted.sh"
    async with client() as alice_http, client() as bob_http, client() as stranger:
        alice = await session_of(alice_http, people, "alice")
        await typed(alice, "/list sold --limit 2", "2 pets with status sold")
        await typed(alice, f"/history save {planted}", "offered as the file planted.sh")
        _, key = await alice.message("deliver_file_start")
        download = f"{people.base}/download/{key}"
        async with stranger.get(download) as response:
            assert response.status == 401  # not logged in
        await people.login(bob_http, PEOPLE["bob"][1])
        async with bob_http.get(download) as response:
            assert response.status == 404  # another person's app: no such download for bob
        async with alice_http.get(download) as response:
            assert response.status == 200
            assert response.headers["Content-Disposition"].startswith('attachment; filename="planted.sh"')
            script = await response.text()
        await alice.socket.close()
    assert script.splitlines() == [
        "# petstore script, saved by /history save; replay with: petstore run FILE",
        "/list --limit 20",
        "/whoami",
        "/list sold --limit 2",
    ]
    assert not planted.exists()
    data = people_home / "data" / "petstore"
    assert not (data / "history").exists() and not (data / "tui-state.json").exists()  # the host's prompt history


async def test_every_response_forbids_framing_by_other_sites(people: Served) -> None:
    async with client() as http:
        responses = []
        for method, path in [("GET", "/"), ("GET", "/nothing"), ("GET", "/?token=x"), ("POST", "/login")]:
            async with http.request(method, people.base + path, allow_redirects=False) as response:
                responses.append(response)
        await people.login(http, PEOPLE["bob"][1])
        for path in ("/", "/static/js/textual.js", "/login", "/nothing", "/download/nothing"):
            async with http.get(people.base + path, allow_redirects=False) as response:
                responses.append(response)
    assert {r.status for r in responses} >= {200, 303, 400, 401, 404}
    for response in responses:
        assert response.headers["Content-Security-Policy"] == "frame-ancestors 'self'", response.url
        assert response.headers["X-Frame-Options"] == "SAMEORIGIN", response.url


@pytest.mark.parametrize("trusted", [False, True])
async def test_the_cookie_is_secure_behind_a_trusted_tls_proxy(tmp_path: Path, trusted: bool) -> None:
    args = ("--forwarded-allow-ips", "127.0.0.1,::1") if trusted else ()
    with web_server(tmp_path, *args) as server:
        async with client() as http:
            for proto, secure in (("https", trusted), ("http", False), (None, False)):
                headers = {"X-Forwarded-Proto": proto} if proto else {}
                async with http.post(
                    server.base + "/login", data={"token": server.token}, headers=headers, allow_redirects=False
                ) as response:
                    assert response.status == 303
                    assert ("Secure" in response.headers["Set-Cookie"]) is secure, proto
            # The Origin a browser sends behind the proxy names the proxy's host: believed from it only.
            behind = {"Origin": "https://pets.example", "X-Forwarded-Host": "pets.example"}
            async with http.post(
                server.base + "/login", data={"token": server.token}, headers=behind, allow_redirects=False
            ) as response:
                assert response.status == (303 if trusted else 403)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("alice operator\n", "line 1: 2 fields; write name role token"),
        ("# people\n\nalice admin {alice}\n", "line 3: the role must be one of none, viewer, operator"),
        ("alice operator short-token\n", "line 1: the token must be at least 16"),
        ("al/ice operator {alice}\n", "line 1: the name must be"),
        ("alice operator {alice}\nalice viewer {bob}\n", "line 2: the same name as line 1"),
        ("alice operator {alice}\nbob viewer {alice}\n", "line 2: the same token as line 1"),
        ("# no one\n", "no one in it"),
    ],
)
def test_a_bad_tokens_file_is_one_line_without_a_token(tmp_path: Path, text: str, problem: str) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(text.format(alice=PEOPLE["alice"][1], bob=PEOPLE["bob"][1]))
    tokens.chmod(0o600)
    done = run_web(tmp_path, "--tokens", str(tokens))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"petstore: tokens file {tokens}")  # the file, the line, what is wrong
    assert problem in done.stderr and done.stderr.count("\n") == 1
    assert PEOPLE["alice"][1] not in done.stderr and "short-token" not in done.stderr


async def test_a_tokens_file_readable_by_others_is_made_0600_with_a_warning(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(tokens_text())
    os.chmod(tokens, 0o644)
    with web_server(tmp_path, access=["--tokens", str(tokens)]) as server:
        assert stat.S_IMODE(tokens.stat().st_mode) == 0o600
        assert server.output[0] == f"petstore: warning: tightened {tokens} to 0600 (it was 0644)\n"
        assert server.output[1].endswith(f"and log in with your token (3 people in {tokens})\n")
        assert all(token not in server.text() for _, token in PEOPLE.values())
        async with client() as http:
            await server.login(http, PEOPLE["carol"][1])
