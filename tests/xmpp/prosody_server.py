"""A real Prosody (Debian's) for tests: 127.0.0.1 on a free c2s port, a MUC component, everything in a temp dir.

``ProsodyServer.create(root)`` writes ``prosody.cfg.lua`` (its pidfile, data, certificate dir and logs under
``root``); ``start()`` spawns ``prosody --config FILE -F`` and waits until the c2s port takes connections;
``stop()`` ends it by PID (SIGTERM, then SIGKILL). ``start()`` after ``stop()`` comes back on the same port with
the same accounts and rooms. Users are made with ``prosodyctl --config FILE register``.

``create(root, tls=True)`` makes one that requires STARTTLS, with a self-signed certificate for ``localhost`` the
client trusts by its ``ca_file``. Otherwise no TLS: the c2s port is plain on loopback (``c2s_require_encryption = false``); SCRAM-SHA-1 is offered, PLAIN is not
(``allow_unencrypted_plain_auth = false``), so no password crosses even loopback in clear. Nagle's algorithm is
off (``network_settings``), as a chat server's should be: with it, each stanza waits ~40 ms for a delayed ACK. New rooms are not locked
and are non-anonymous by default (``muc_room_default_public_jids``); a room made semi-anonymous is configured so by
its owner in the test that needs one.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from real_parts import stop_by_pid

DOMAIN = "localhost"
MUC = f"conference.{DOMAIN}"

_CONFIG = """\
run_as_root = true
pidfile = "{root}/prosody.pid"
data_path = "{root}/data"
certificates = "{root}/certs"
interfaces = {{ "127.0.0.1" }}
c2s_ports = {{ {port} }}
c2s_interfaces = {{ "127.0.0.1" }}
c2s_direct_tls_ports = {{ }}
legacy_ssl_ports = {{ }}
s2s_ports = {{ }}
http_ports = {{ }}
https_ports = {{ }}
modules_enabled = {{ "roster"; "saslauth"; "disco"; "ping"; "posix"{with_tls} }}
modules_disabled = {{ "s2s"; "offline"{no_tls} }}
c2s_require_encryption = {tls}
allow_unencrypted_plain_auth = false
authentication = "internal_hashed"
storage = "internal"
network_settings = {{ nagle = false }}
log = {{ info = "{root}/prosody.log"; error = "{root}/prosody.err" }}
VirtualHost "{domain}"
{ssl}Component "{muc}" "muc"
  restrict_room_creation = false
  muc_room_locking = false
  muc_room_default_public_jids = true
  muc_room_default_history_length = 20
"""


class ProsodyUnavailable(RuntimeError):
    """Prosody could not be started here; the message says why, with its log's tail."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ProsodyServer:
    root: Path
    port: int
    process: subprocess.Popen[bytes] | None = None

    @classmethod
    def create(cls, root: Path, *, tls: bool = False) -> ProsodyServer:
        """Writes the config under ``root`` (Prosody's binaries must be installed: ProsodyUnavailable if not).
        ``tls``: STARTTLS required, with a self-signed certificate for ``localhost`` (its PEM: :attr:`ca_file`)."""
        if shutil.which("prosody") is None or shutil.which("prosodyctl") is None:
            raise ProsodyUnavailable("prosody is not installed (apt-get install prosody)")
        root.mkdir(parents=True, exist_ok=True)
        (root / "data").mkdir(exist_ok=True)
        (root / "certs").mkdir(exist_ok=True)
        server = cls(root=root, port=free_port())
        ssl = ""
        if tls:
            server._self_signed()
            ssl = f'  ssl = {{ key = "{root}/certs/localhost.key"; certificate = "{server.ca_file}" }}\n'
        text = _CONFIG.format(
            root=root,
            port=server.port,
            domain=DOMAIN,
            muc=MUC,
            tls="true" if tls else "false",
            no_tls="" if tls else '; "tls"',
            with_tls='; "tls"' if tls else "",
            ssl=ssl,
        )
        server.config.write_text(text, encoding="utf-8")
        return server

    @property
    def ca_file(self) -> Path:
        return self.root / "certs" / "localhost.crt"

    def _self_signed(self) -> None:
        """A key and a self-signed certificate for localhost (openssl), the key readable by its owner only."""
        key = self.root / "certs" / "localhost.key"
        done = subprocess.run(
            [
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                "/CN=localhost",
                "-addext",
                "subjectAltName=DNS:localhost",
                "-keyout",
                str(key),
                "-out",
                str(self.ca_file),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if done.returncode != 0:
            raise ProsodyUnavailable(f"openssl could not make a certificate: {done.stderr[-1000:]}")
        key.chmod(0o600)

    @property
    def config(self) -> Path:
        return self.root / "prosody.cfg.lua"

    def register(self, user: str, password: str) -> str:
        """Makes the account ``user@localhost``; returns its bare JID."""
        done = subprocess.run(
            ["prosodyctl", "--config", str(self.config), "register", user, DOMAIN, password],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if done.returncode != 0:
            raise ProsodyUnavailable(f"prosodyctl register failed: {(done.stderr or done.stdout)[-2000:]}")
        return f"{user}@{DOMAIN}"

    def log_tail(self, *, chars: int = 2000) -> str:
        parts = []
        for name in ("stdout.log", "prosody.log", "prosody.err"):
            path = self.root / name
            if path.exists():
                parts.append(f"--- {name}\n{path.read_text(encoding='utf-8', errors='replace')[-chars:]}")
        return "\n".join(parts)

    def start(self, *, deadline: float = 30.0) -> None:
        """Spawns Prosody and waits until its c2s port takes a connection."""
        assert self.process is None, "already running"
        began = time.monotonic()
        with (self.root / "stdout.log").open("ab") as out:
            self.process = subprocess.Popen(
                ["prosody", "--config", str(self.config), "-F"],
                cwd=self.root,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        while time.monotonic() - began < deadline:
            if self.process.poll() is not None:
                code, self.process = self.process.returncode, None
                raise ProsodyUnavailable(f"prosody exited with {code} while starting\n{self.log_tail()}")
            if self._listening():
                return
            time.sleep(0.05)  # polling interval of the readiness check, not a synchronisation
        self.stop()
        raise ProsodyUnavailable(f"prosody did not listen within {deadline:.0f}s\n{self.log_tail()}")

    def _listening(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def stop(self) -> None:
        """Ends Prosody by its PID."""
        process, self.process = self.process, None
        stop_by_pid(process, grace=20)
