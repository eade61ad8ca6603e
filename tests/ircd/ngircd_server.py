"""A real ngIRCd for tests: 127.0.0.1 on a free port, its config and log in a temp dir, started and stopped by PID.

``NgircdServer.create(root, password=...)`` writes the config: no PAM, no ident or DNS lookups, no includes from
/etc, unlimited connections from one address (every test client comes from 127.0.0.1), nicks up to 30 characters,
and ngIRCd's own flood limits, which are compiled in (a client's commands are read at 3 a second, the rest waits in
a read buffer of a few KiB; one that overflows it is disconnected). ``password`` is the server password every
client must send (PASS). With ``services`` a services server may link (``Services.link``) and tell ngIRCd which
account a nick is logged in to (METADATA accountname), as Atheme does on ngIRCd: WHOIS then shows it (330).

``start()`` spawns ``ngircd --nodaemon`` and polls the port until it accepts; ``stop()`` ends it by PID (SIGTERM,
then SIGKILL). ``start()`` after ``stop()`` comes back on the same port.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from real_parts import stop_by_pid

NGIRCD = shutil.which("ngircd") or "/usr/sbin/ngircd"
SERVER_NAME = "irc.test"
SERVICES_NAME = "services.test"


class NgircdUnavailable(RuntimeError):
    """ngIRCd could not be started here; the message says why (and its log's tail)."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _config(*, root: Path, port: int, password: str | None, services: str | None) -> str:
    lines = [
        "[Global]",
        f"Name = {SERVER_NAME}",
        "Info = petstore test server",
        "Listen = 127.0.0.1",
        f"Ports = {port}",
        f"MotdPhrase = petstore tests on {port}",
        "AdminInfo1 = petstore tests",
        "AdminInfo2 = 127.0.0.1",
        "AdminEMail = nobody@irc.test",
        *([f"Password = {password}"] if password else []),
        "[Limits]",
        "MaxConnectionsIP = 0",
        "MaxNickLength = 30",
        "PingTimeout = 120",
        "PongTimeout = 20",
        "[Options]",
        "PAM = no",
        "Ident = no",
        "DNS = no",
        f"IncludeDir = {root / 'conf.d'}",
        "OperCanUseMode = yes",
    ]
    if services is not None:
        lines += [
            "[Server]",
            f"Name = {SERVICES_NAME}",
            f"MyPassword = {services}",
            f"PeerPassword = {services}",
            "ServiceMask = *Serv",
        ]
    return "\n".join(lines) + "\n"


@dataclass
class NgircdServer:
    """One ngIRCd; ``port`` stays the same across restarts."""

    root: Path
    port: int
    password: str | None = None
    services_password: str | None = None
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @classmethod
    def create(cls, root: Path, *, password: str | None = None, services: str | None = None) -> NgircdServer:
        if not Path(NGIRCD).exists():
            raise NgircdUnavailable(f"{NGIRCD} is not installed (apt-get install ngircd)")
        root.mkdir(parents=True, exist_ok=True)
        (root / "conf.d").mkdir(exist_ok=True)
        server = cls(root=root, port=free_port(), password=password, services_password=services)
        config = root / "ngircd.conf"
        config.write_text(_config(root=root, port=server.port, password=password, services=services), "utf-8")
        config.chmod(0o600)
        return server

    @property
    def log_path(self) -> Path:
        return self.root / "ngircd.log"

    def start(self, *, deadline: float = 20.0) -> NgircdServer:
        command = [NGIRCD, "--nodaemon", "--config", str(self.root / "ngircd.conf")]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        end = time.monotonic() + deadline
        while not self._accepts():
            if self.process.poll() is not None:
                code, self.process = self.process.returncode, None
                raise NgircdUnavailable(f"ngircd exited with {code}:\n{self._tail()}")
            if time.monotonic() > end:
                self.stop()
                raise NgircdUnavailable(f"ngircd did not listen within {deadline:.0f}s:\n{self._tail()}")
            time.sleep(0.05)  # polling a port that is not open yet, not a synchronisation
        return self

    def stop(self) -> None:
        """Ends ngIRCd by its PID."""
        process, self.process = self.process, None
        stop_by_pid(process, grace=10)

    def _accepts(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def services(self) -> Services:
        """A services server linked to this one (``create(..., services=PASSWORD)``), as Atheme links to ngIRCd."""
        assert self.services_password is not None, "create the server with services=PASSWORD"
        return Services.link(self.port, self.services_password)

    def _tail(self) -> str:
        return self.log_path.read_text("utf-8", errors="replace")[-2000:] if self.log_path.exists() else ""


class Services:
    """A services server's side of a server link (RFC 2813 with ngIRCd's IRC+ flags), as far as tests need it: it
    tells ngIRCd which account a nick is logged in to (``METADATA nick accountname :account``), as Atheme would."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    @classmethod
    def link(cls, port: int, password: str) -> Services:
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        sock.sendall(
            f"PASS {password} 0210-IRC+ services|1.0:CMSX P\r\nSERVER {SERVICES_NAME} 1 :Services\r\n".encode()
        )
        services = cls(sock)
        services._until(" SERVER ")  # ngIRCd's own PASS and SERVER: the link is up
        return services

    def login(self, nick: str, account: str) -> None:
        """``nick`` is logged in to ``account`` from now on (WHOIS shows it: 330), once this returns: ngIRCd reads a
        link's lines in order, so its PONG to the PING sent after METADATA says it has applied it (a client's WHOIS
        sent before that, on another connection, may be answered first, without the account)."""
        self._sock.sendall(
            f":{SERVICES_NAME} METADATA {nick} accountname :{account}\r\n"
            f":{SERVICES_NAME} PING {SERVICES_NAME} :{SERVER_NAME}\r\n".encode()
        )
        self._until(" PONG ")

    def _until(self, needle: str) -> None:
        """Reads what ngIRCd sends on the link (its burst, its PINGs) until a line holds ``needle``."""
        seen = b""
        while needle.encode() not in seen:
            data = self._sock.recv(4096)
            if not data:
                raise NgircdUnavailable(f"ngircd closed the services link before {needle.strip()!r}: {seen[-500:]!r}")
            seen = seen[-4096:] + data

    def close(self) -> None:
        self._sock.close()
