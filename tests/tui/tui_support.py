"""Test support for the TUI: sessions on the sandbox service, a transport with faults."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

import httpx
from pilot_support import settle  # noqa: F401  (re-exported for tests/tui)

from bot_commands.commands import default_registry
from bot_commands.policy import Policy
from bot_commands.results import EnvInfo
from bot_commands.session import CommandSession
from petstore_api.client import PetStoreClient, RetryPolicy
from petstore_cli.compose import SANDBOX_LABEL
from petstore_server.sandbox import Sandbox
from tui.app import PetStoreApp

BASE_URL = "http://sandbox.localhost/v1"
SIZE = (110, 32)


def make_client(
    sandbox: Sandbox, *, api_key: str | None = None, transport: Any = None, retry: RetryPolicy | None = None
) -> PetStoreClient:
    return PetStoreClient(
        base_url=BASE_URL,
        api_key=sandbox.api_key if api_key is None else api_key,
        transport=transport or httpx.ASGITransport(app=sandbox.app),
        retry=retry or RetryPolicy(attempts=1),
        allow_insecure_http=True,
    )


def make_env(env: str = "sandbox", **kwargs: Any) -> EnvInfo:
    """As the CLI composes it: the sandbox is named SANDBOX_LABEL everywhere (its URL never shows)."""
    label = SANDBOX_LABEL if env == "sandbox" else BASE_URL
    return EnvInfo(
        env=env, base_url=kwargs.pop("base_url", label), masked_key="sk-...test", sandbox=env == "sandbox", **kwargs
    )


@dataclass
class Harness:
    """A sandbox and a way to build sessions and apps on it."""

    sandbox: Sandbox
    clients: list[PetStoreClient]
    tap: Tap | None = None

    def session(
        self, *, env: str = "sandbox", read_only: bool = False, confirm: Any = None, api_key: str | None = None
    ) -> CommandSession:
        """A session on the sandbox through a fresh :class:`Tap` (``self.tap``)."""
        self.tap = Tap(self.sandbox.app)
        client = make_client(self.sandbox, api_key=api_key, transport=self.tap)
        self.clients.append(client)
        return CommandSession(
            client,
            env=make_env(env, read_only=read_only),
            registry=default_registry(),
            policy=Policy(read_only=read_only, production=env == "production"),
            confirm=confirm,
            sleep=no_sleep,
        )

    def app(self, session: CommandSession | None = None, **kwargs: Any) -> PetStoreApp:
        return PetStoreApp(session or self.session(), **kwargs)


async def no_sleep(_seconds: float) -> None:
    return None


class Tap(httpx.AsyncBaseTransport):
    """The sandbox's ASGI transport, with faults and gates for tests.

    ``down``: every request fails to connect. ``replies``: (method, path) ->
    a canned (status, JSON) reply. ``gates``: a query substring -> an event the
    request waits for (a slow answer, released by the test). ``read_timeouts``: that many
    requests (the first ones) end as a read timeout would, before any gate.
    """

    def __init__(self, app: Any) -> None:
        self.inner = httpx.ASGITransport(app=app)
        self.down = False
        self.replies: dict[tuple[str, str], tuple[int, Any]] = {}
        self.gates: dict[str, Any] = {}
        self.seen: list[str] = []
        self.read_timeouts = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(f"{request.method} {request.url.path}?{request.url.query.decode()}")
        if self.down:
            raise httpx.ConnectError("connection refused", request=request)
        if self.read_timeouts > 0:
            self.read_timeouts -= 1
            raise httpx.ReadTimeout("timed out", request=request)
        for marker, gate in self.gates.items():
            if marker in str(request.url):
                await gate.wait()
        canned = self._canned(request)
        if canned is not None:
            status, body = canned
            return httpx.Response(status, json=body, request=request)
        return await self.inner.handle_async_request(request)

    def _canned(self, request: httpx.Request) -> tuple[int, Any] | None:
        for (method, prefix), reply in self.replies.items():
            if request.method == method and request.url.path.startswith(prefix):
                return reply
        return None


def error_body(status: int, code: str, message: str) -> dict[str, Any]:
    return {"code": code, "message": message, "status": status}


def screen_text(app: PetStoreApp) -> str:
    """The whole frame as plain text (from the screenshot Textual would save)."""
    svg = app.export_screenshot().split("</style>")[-1]
    return html.unescape(re.sub(r"<[^>]+>", "", svg)).replace("\xa0", " ")


async def wait_until(pilot: Any, ready: Any, *, rounds: int = 200) -> None:
    """Pause until ``ready()`` is true (for states reached while a worker still waits on a gate)."""
    for _ in range(rounds):
        if ready():
            return
        await pilot.pause()
    raise AssertionError("the app did not reach the state waited for")


async def wait_for_screen(pilot: Any, screen_type: type, *, rounds: int = 200) -> Any:
    """Pause until a screen of ``screen_type`` is on top (workers may still run)."""
    for _ in range(rounds):
        if isinstance(pilot.app.screen, screen_type):
            return pilot.app.screen
        await pilot.pause()
    raise AssertionError(f"{screen_type.__name__} did not open; top is {pilot.app.screen!r}")


def screen_lines(app: PetStoreApp) -> list[str]:
    """The frame as it looks, one string per terminal row (from the screenshot Textual would save)."""
    return svg_lines(app.export_screenshot())


_SVG_TEXT = re.compile(r'<text[^>]*\bx="([\d.]+)"[^>]*clip-path="url\(#[\w-]*line-(\d+)\)"[^>]*>([^<]*)</text>')


def svg_lines(svg: str) -> list[str]:
    """Each terminal row of a Textual screenshot (cells of 12.2 px), trailing blanks dropped."""
    rows: dict[int, list[str]] = {}
    for x, line, text in _SVG_TEXT.findall(svg):
        row = rows.setdefault(int(line), [])
        column = round(float(x) / 12.2)
        chars = html.unescape(text).replace("\xa0", " ")
        row.extend(" " * (column + len(chars) - len(row)))
        row[column : column + len(chars)] = chars
    return ["".join(rows.get(i, [])).rstrip() for i in range(max(rows, default=-1) + 1)]


def burst(app: PetStoreApp, *keys: str) -> None:
    """Keys as a paste or a script delivers them: all queued at once, no pause for the app between them
    (``pilot.press`` waits for the app to go idle after each key)."""
    from textual import events

    names = {"/": "slash", " ": "space", "-": "minus"}
    chars = {"tab": "\t", "enter": "\r"}
    for key in keys:
        if len(key) == 1:
            app.post_message(events.Key(names.get(key, key), key))
        else:
            app.post_message(events.Key(key, chars.get(key)))
