"""A real Synapse homeserver for tests: SQLite in a temp dir, 127.0.0.1 on a free port, rate limits raised (but
for the login limit, ``rc_login``, when created with ``default_login_limits=True``: Synapse's own, 5 logins a burst).

``SynapseServer.create(root)`` writes the config; ``start()`` spawns ``python -m synapse.app.homeserver`` and
polls ``/_matrix/client/versions`` until it answers or the deadline passes; ``stop()`` ends it by PID
(SIGTERM, then SIGKILL). ``start()`` after ``stop()`` comes back on the same port with the same data.
Users are registered through the shared-secret admin API (HMAC-SHA1 over a nonce).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from real_parts import stop_by_pid

SERVER_NAME = "localhost"
_HIGH = {"per_second": 10000, "burst_count": 100000}
_LOG_CONFIG = """\
version: 1
formatters:
  plain:
    format: '%(asctime)s %(name)s %(levelname)s %(message)s'
handlers:
  file:
    class: logging.FileHandler
    formatter: plain
    filename: {log}
root:
  level: WARNING
  handlers: [file]
disable_existing_loggers: false
"""


class SynapseUnavailable(RuntimeError):
    """Synapse could not be started here; the message carries the reason and its log tail."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _rate_limits(*, default_login_limits: bool) -> dict[str, object]:
    limits: dict[str, object] = {
        "rc_message": _HIGH,
        "rc_registration": _HIGH,
        "rc_registration_token_validity": _HIGH,
        "rc_login": {"address": _HIGH, "account": _HIGH, "failed_attempts": _HIGH},
        "rc_joins": {"local": _HIGH, "remote": _HIGH},
        "rc_joins_per_room": _HIGH,
        "rc_invites": {"per_room": _HIGH, "per_user": _HIGH, "per_issuer": _HIGH},
        "rc_third_party_invite": _HIGH,
        "rc_admin_redaction": _HIGH,
        "rc_3pid_validation": _HIGH,
        "rc_room_creation": _HIGH,
        "rc_reports": _HIGH,
        "rc_delayed_event_mgmt": _HIGH,
        "rc_presence": {"per_user": _HIGH},
    }
    if default_login_limits:
        del limits["rc_login"]
    return limits


def _config(*, root: Path, port: int, shared_secret: str, default_login_limits: bool) -> dict[str, object]:
    return {
        "server_name": SERVER_NAME,
        "pid_file": str(root / "homeserver.pid"),
        "listeners": [
            {
                "port": port,
                "bind_addresses": ["127.0.0.1"],
                "type": "http",
                "tls": False,
                "x_forwarded": False,
                "resources": [{"names": ["client"], "compress": False}],
            }
        ],
        "database": {"name": "sqlite3", "args": {"database": str(root / "homeserver.db")}},
        "log_config": str(root / "log.yaml"),
        "media_store_path": str(root / "media"),
        "signing_key_path": str(root / "signing.key"),
        "registration_shared_secret": shared_secret,
        "macaroon_secret_key": secrets.token_hex(16),
        "form_secret": secrets.token_hex(16),
        "report_stats": False,
        "enable_metrics": False,
        "enable_registration": False,
        "presence": {"enabled": False},
        # Synapse's own test configs use 4 rounds: at its default 12, each registration and password login of a test
        # user costs the homeserver ~0.26 s of CPU, the suite's largest single cost after its own processes.
        "bcrypt_rounds": 4,
        "trusted_key_servers": [],
        "suppress_key_server_warning": True,
        "federation_domain_whitelist": [],
        "url_preview_enabled": False,
        "allow_public_rooms_over_federation": False,
        **_rate_limits(default_login_limits=default_login_limits),
    }


@dataclass
class SynapseServer:
    root: Path
    port: int
    shared_secret: str
    process: subprocess.Popen[bytes] | None = None
    startup_seconds: list[float] = field(default_factory=list)

    @classmethod
    def create(cls, root: Path, *, default_login_limits: bool = False) -> SynapseServer:
        """Writes config, log config and signing key under ``root``."""
        import json

        root.mkdir(parents=True, exist_ok=True)
        server = cls(root=root, port=free_port(), shared_secret=secrets.token_hex(16))
        (root / "log.yaml").write_text(_LOG_CONFIG.format(log=root / "homeserver.log"), encoding="utf-8")
        config = _config(
            root=root, port=server.port, shared_secret=server.shared_secret, default_login_limits=default_login_limits
        )
        # JSON is YAML: no YAML writer needed.
        (root / "homeserver.yaml").write_text(json.dumps(config, indent=1), encoding="utf-8")
        server._run_synapse("--generate-keys")
        return server

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _command(self, *extra: str) -> list[str]:
        return [
            sys.executable,
            "-m",
            "synapse.app.homeserver",
            "--config-path",
            str(self.root / "homeserver.yaml"),
            *extra,
        ]

    def _run_synapse(self, *extra: str) -> None:
        done = subprocess.run(self._command(*extra), capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            raise SynapseUnavailable(f"synapse {' '.join(extra)} failed: {(done.stderr or done.stdout)[-2000:]}")

    def log_tail(self, *, chars: int = 2000) -> str:
        parts = []
        for name in ("stderr.log", "homeserver.log"):
            path = self.root / name
            if path.exists():
                parts.append(f"--- {name}\n{path.read_text(encoding='utf-8', errors='replace')[-chars:]}")
        return "\n".join(parts)

    def start(self, *, deadline: float = 90.0) -> float:
        """Spawns Synapse and waits until it answers; returns how long that took, in seconds."""
        assert self.process is None, "already running"
        began = time.monotonic()
        with (self.root / "stderr.log").open("ab") as out:
            self.process = subprocess.Popen(
                self._command(), cwd=self.root, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        with httpx.Client(timeout=2.0) as http:  # one client: each new one builds a TLS context (~40 ms of CPU)
            while time.monotonic() - began < deadline:
                if self.process.poll() is not None:
                    code = self.process.returncode
                    self.process = None
                    raise SynapseUnavailable(f"synapse exited with {code} while starting\n{self.log_tail()}")
                if self._answers(http):
                    took = time.monotonic() - began
                    self.startup_seconds.append(took)
                    return took
                time.sleep(0.1)  # polling interval of the readiness check, not a synchronisation
        self.stop()
        raise SynapseUnavailable(f"synapse did not answer within {deadline:.0f}s\n{self.log_tail()}")

    def _answers(self, http: httpx.Client) -> bool:
        try:
            return http.get(f"{self.url}/_matrix/client/versions").status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        """Ends Synapse by its PID."""
        process, self.process = self.process, None
        stop_by_pid(process, grace=20)

    def register(self, *, localpart: str, password: str, admin: bool = False) -> str:
        """Registers a user with the shared secret; returns the full user id."""
        return self.register_session(localpart=localpart, password=password, admin=admin)[0]

    def register_session(self, *, localpart: str, password: str, admin: bool = False) -> tuple[str, str]:
        """Registers a user with the shared secret; returns the full user id and the access token the registration
        gave (a session that cost no login, so no login limit)."""
        endpoint = f"{self.url}/_synapse/admin/v1/register"
        nonce = httpx.get(endpoint, timeout=10).json()["nonce"]
        message = b"\x00".join(
            [nonce.encode(), localpart.encode(), password.encode(), b"admin" if admin else b"notadmin"]
        )
        mac = hmac.new(self.shared_secret.encode(), message, hashlib.sha1).hexdigest()
        body = {"nonce": nonce, "username": localpart, "password": password, "admin": admin, "mac": mac}
        response = httpx.post(endpoint, json=body, timeout=30)
        response.raise_for_status()
        return str(response.json()["user_id"]), str(response.json()["access_token"])
