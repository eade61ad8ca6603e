"""A real ``petstore web`` for the tests: started as the CLI runs it, on 127.0.0.1, stopped by its PID.

``Served.login(http)`` logs an aiohttp client in through the login form, as a browser posts it.

``children(pid)`` lists the app processes a server has started; ``wait_gone(pid)`` waits (without sleeping:
a pidfd becomes readable when the process ends) for one to end.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import os
import re
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "test-token-0123456789abcdefXYZ"
#: ``--tokens`` for three people: alice the operator, bob the viewer, carol without a role.
PEOPLE = {
    "alice": ("operator", "alice-token-0123456789abcdef"),
    "bob": ("viewer", "bob-token-0123456789abcdefgh"),
    "carol": ("none", "carol-token-0123456789abcdef"),
}
URL_LINE = re.compile(r"petstore web: open (http://127\.0\.0\.1:(\d+))/(?:#token=(\S+)| and log in with .+)$")
#: CSI, OSC, charset and keypad sequences: what is left is the text the terminal shows.
ANSI = re.compile(r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


def environment(home: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_") and k != "TEXTUAL_DRIVER"}
    return {**base, "XDG_DATA_HOME": str(home / "data"), "XDG_CONFIG_HOME": str(home / "config")}


@dataclass
class Served:
    proc: subprocess.Popen[str]
    base: str
    port: int
    token: str
    output: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        """The address a browser opens to log in at once (the token after '#': it never leaves the browser)."""
        return f"{self.base}/#token={self.token}"

    async def login(self, http: aiohttp.ClientSession, token: str | None = None) -> None:
        """Post ``token`` (default: the server's) to the login form, from this server's own page."""
        async with http.post(
            self.base + "/login", data={"token": token or self.token}, headers={"Origin": self.base}
        ) as response:
            assert response.status == 200 and response.url.path == "/", response.status  # 303, then the app page

    @property
    def ws(self) -> str:
        return self.base.replace("http://", "ws://") + "/ws?width=110&height=32"

    def text(self) -> str:
        return "".join(self.output)


def run_web(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``petstore web ARGS`` expected to stop at once (a bad option): its exit code and output."""
    return subprocess.run(
        [sys.executable, "-m", "petstore_cli", "web", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=environment(home),
        stdin=subprocess.DEVNULL,
    )


def secret_file(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o600)
    return path


def tokens_text() -> str:
    """A ``--tokens`` file for PEOPLE."""
    return "# name role token\n\n" + "".join(f"{name}\t{role}  {token}\n" for name, (role, token) in PEOPLE.items())


def audit_lines(home: Path) -> list[dict[str, object]]:
    """The audit log a server on ``home`` keeps by default (the data dir's audit.ndjson), one dict a line."""
    path = home / "data" / "petstore" / "audit.ndjson"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@contextlib.contextmanager
def web_server(
    home: Path, *args: str, people: bool = False, access: Sequence[str] = (), cwd: Path = ROOT
) -> Iterator[Served]:
    """``petstore web --port 0 --token-file ...`` (``people``: ``--tokens`` with PEOPLE, ``Served.token`` being
    alice's; ``access``: these options instead) with ``args``, run from ``cwd`` (``-P``: the server itself never
    imports from there); SIGTERM (then SIGKILL) at the end."""
    home.mkdir(parents=True, exist_ok=True)
    if people:
        access = ["--tokens", str(secret_file(home / "tokens", tokens_text()))]
    elif not access:
        access = ["--token-file", str(secret_file(home / "token", TOKEN + "\n"))]
    proc = subprocess.Popen(
        [sys.executable, "-P", "-m", "petstore_cli", "web", "--port", "0", *access, *args],
        cwd=cwd,
        env=environment(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        lines: list[str] = []
        match = None
        while match is None:  # warnings (a token file made 0600), then the address
            ready, _, _ = select.select([proc.stdout], [], [], 30)
            line = proc.stdout.readline() if ready else ""
            assert line, f"petstore web did not start: {''.join(lines)!r}"
            lines.append(line)
            match = URL_LINE.match(line.rstrip("\n"))
        token = match.group(3) or (PEOPLE["alice"][1] if people else TOKEN)
        served = Served(proc, match.group(1), int(match.group(2)), token, lines)
        threading.Thread(target=lambda: served.output.extend(iter(proc.stdout.readline, "")), daemon=True).start()
        yield served
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def wait_gone(pid: int, timeout: float = 10.0) -> bool:
    """True once process ``pid`` has ended (or is a zombie its parent has not reaped yet), within ``timeout``."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        readable, _, _ = select.select([fd], [], [], timeout)
        return bool(readable)
    finally:
        os.close(fd)


def client() -> aiohttp.ClientSession:
    """A client that keeps cookies for an IP address (aiohttp's default jar refuses them; browsers do not)."""
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


class Screen:
    """The text a session's terminal stream carries (escape sequences taken out), frame after frame."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        self.socket = socket
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.text = ""
        #: The server's text messages (textual-serve's envelopes, e.g. ``["deliver_file_start", KEY]``).
        self.messages: list[object] = []

    async def until(self, *needles: str, timeout: float = 30.0) -> str:
        """Read frames until the text read since the last call holds every needle; returns that text."""
        self.text = ""
        end = asyncio.get_running_loop().time() + timeout
        while not all(n in self.text for n in needles):
            await self._receive(end, f"{needles!r} shown")
        return self.text

    async def message(self, kind: str, *, timeout: float = 30.0) -> list[object]:
        """The first text message of ``kind`` the server sent (reading frames until it comes)."""
        end = asyncio.get_running_loop().time() + timeout
        while True:
            for message in self.messages:
                if isinstance(message, list) and message and message[0] == kind:
                    return message
            await self._receive(end, f"a {kind!r} message")

    async def _receive(self, end: float, waiting_for: str) -> None:
        """One frame (screen text, or a text message), before the loop's time ``end``."""
        loop = asyncio.get_running_loop()
        if loop.time() > end:
            raise AssertionError(f"{waiting_for}: not within the deadline; text: {self.text[-600:]!r}")
        try:
            message = await asyncio.wait_for(self.socket.receive(), max(end - loop.time(), 0.001))
        except TimeoutError:
            raise AssertionError(f"{waiting_for}: not within the deadline; text: {self.text[-600:]!r}") from None
        if message.type == aiohttp.WSMsgType.BINARY:
            self.text += ANSI.sub("", self.decoder.decode(message.data))
        elif message.type == aiohttp.WSMsgType.TEXT:
            self.messages.append(json.loads(message.data))
        elif message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
            raise AssertionError(f"the session closed before {waiting_for}")


#: For the browser tests and bench_web: textual.js keeps its xterm.js Terminal to itself. Terminal's constructor
#: sets ``this._core``; a setter on Object.prototype notes that object (the one with ``loadAddon``) as
#: window.__xterm, so the page's own terminal buffer, what it paints, can be read.
XTERM_HOOK = """
Object.defineProperty(Object.prototype, "_core", {
  configurable: true,
  set(value) {
    Object.defineProperty(this, "_core", {value, writable: true, configurable: true, enumerable: false});
    if (typeof this.loadAddon === "function") window.__xterm = this;
  },
});
"""

#: The terminal's visible lines, as text.
READ_SCREEN = """() => {
  const term = window.__xterm;
  if (!term) return "";
  const buffer = term.buffer.active, lines = [];
  for (let i = 0; i < term.rows; i++) {
    const line = buffer.getLine(buffer.viewportY + i);
    lines.push(line ? line.translateToString(true) : "");
  }
  return lines.join("\\n");
}"""

#: True once every needle (the argument, a list) is on the terminal's screen.
SHOWS = "needles => { const text = (" + READ_SCREEN + ")(); return needles.every(n => text.includes(n)); }"
