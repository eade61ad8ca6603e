"""The real ``petstore bot matrix`` as a subprocess, and what tests need around it.

:class:`BotProcess` writes a config file in a temp dir (sandbox data dir, state dir and audit log there too), passes
the bot user's password through ``PETSTORE_BOT__MATRIX__PASSWORD`` only (never in the file), starts
``python -m petstore_cli bot matrix --config FILE`` with stderr in a file, and waits for the transport's
``ready:`` log line (from then on every new message is answered). It is stopped by PID with SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from matrix.conftest import Account
from matrix.cs_client import POLL, Event, MatrixUser, from_sender, replies_to

ROOT = Path(__file__).resolve().parents[2]
READY = "ready: answering new messages"
#: ``[bot] lease_ttl`` of the replicas the takeover tests start: a standby takes over within about 3.5 s of the
#: holder's death or freeze rather than the default's 7 s (what is tested, the takeover, is the same).
LEASE_TTL = 3.0


def _toml(value: object) -> str:
    """A TOML value for a string, bool, number or list of strings (JSON strings are TOML basic strings)."""
    return json.dumps(value)


@dataclass
class BotConfig:
    """What goes into the config file; everything on disk lives under ``root``."""

    homeserver: str
    user_id: str
    root: Path
    rooms: Sequence[str] = ()
    operators: Sequence[str] = ()
    viewers: Sequence[str] = ()
    default_role: str = "none"
    confirm_writes: bool = True
    rate_limit: str = "off"
    extra: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def data_dir(self) -> Path:
        return self.root / "sandbox"

    @property
    def audit_log(self) -> Path:
        return self.root / "audit.ndjson"

    def text(self) -> str:
        sections: dict[str, dict[str, Any]] = {
            "sandbox": {"data_dir": str(self.data_dir)},
            "bot": {
                "default_role": self.default_role,
                "confirm_writes": self.confirm_writes,
                "rate_limit": self.rate_limit,
                "audit_log": str(self.audit_log),
            },
            "bot.roles": {"operators": list(self.operators), "viewers": list(self.viewers)},
        }
        if self.homeserver:  # another platform's bot ("" here) has its section in ``extra``
            sections["bot.matrix"] = {
                "homeserver": self.homeserver,
                "user_id": self.user_id,
                "rooms": list(self.rooms),
                "state_dir": str(self.root / "bot-state"),
            }
        for name, values in self.extra.items():
            sections.setdefault(name, {}).update(values)
        return "".join(
            f"[{name}]\n" + "".join(f"{key} = {_toml(value)}\n" for key, value in values.items()) + "\n"
            for name, values in sections.items()
        )


def approvals_config(
    *, homeserver: str, user_id: str, root: Path, approver: str, room: str, service: str, key: str, state: str
) -> BotConfig:
    """A bot serving ``service`` as production under ``[bot] approvals``, posting requests in ``room``, its state
    in ``state`` (the one the terminal shares); ``approver`` is an operator. Start it with ``--env production``."""
    return BotConfig(
        homeserver=homeserver,
        user_id=user_id,
        root=root,
        operators=[approver],
        extra={
            "production": {"base_url": service, "api_key": key},
            "http": {"allow_insecure_http": True},
            "bot": {"approvals": ["production"], "approvals_room": room, "state": state},
        },
    )


def petstore_env(root: Path, **extra: str) -> dict[str, str]:
    """The environment of a petstore subprocess: no PETSTORE_* from outside, config and data dirs under ``root``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    env["XDG_CONFIG_HOME"] = str(root / "xdg-config")
    env["XDG_DATA_HOME"] = str(root / "xdg-data")
    env.update(extra)
    return env


class BotProcess:
    """One running ``petstore bot matrix``; ``stop()`` sends SIGTERM and returns the exit code. ``platform``: the
    ``petstore bot <platform>`` to run (its password in ``PETSTORE_BOT__<PLATFORM>__PASSWORD``; tests/xmpp's)."""

    platform = "matrix"

    def __init__(
        self,
        config: BotConfig,
        *,
        password: str,
        args: Sequence[str] = (),
        env: dict[str, str] | None = None,
        every_platform: bool = False,
    ) -> None:
        """``every_platform``: run ``petstore bot`` with no platform named (every one the config sets) rather than
        ``petstore bot <platform>``."""
        self.every_platform = every_platform
        self.config = config
        self.password = password
        self.args = list(args)
        self.env = dict(env or {})  # e.g. PETSTORE_BASE_URL and PETSTORE_API_KEY of a real service
        config.root.mkdir(parents=True, exist_ok=True)
        self.config_path = config.root / "petstore.toml"
        self.stderr_path = config.root / "bot.stderr"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> BotProcess:
        self.config_path.write_text(self.config.text(), encoding="utf-8")
        secret = {f"PETSTORE_BOT__{self.platform.upper()}__PASSWORD": self.password}
        env = petstore_env(self.config.root, **secret, **self.env)
        config = ["--config", str(self.config_path)]
        words = [*config, "bot"] if self.every_platform else ["bot", self.platform, *config]
        command = [sys.executable, "-m", "petstore_cli", *self.args, *words]
        with self.stderr_path.open("ab") as err:
            self.process = subprocess.Popen(
                command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=err, stderr=err
            )
        return self

    def log(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace") if self.stderr_path.exists() else ""

    def wait_logged(self, text: str, *, deadline: float = 90.0, after: int = 0) -> None:
        """Polls the bot's log until ``text`` shows up after offset ``after``; fails if the bot exits first."""
        end = time.monotonic() + deadline
        while text not in self.log()[after:]:
            assert self.process is not None
            if self.process.poll() is not None:
                raise AssertionError(f"the bot exited with {self.process.returncode}:\n{self.log()[-3000:]}")
            if time.monotonic() > end:
                raise AssertionError(f"{text!r} not logged within {deadline:.0f}s:\n{self.log()[-3000:]}")
            time.sleep(POLL)  # polling interval of a log file, not a synchronisation

    async def logged(self, text: str, *, deadline: float = 90.0, after: int = 0) -> None:
        await asyncio.to_thread(self.wait_logged, text, deadline=deadline, after=after)

    def ready(self) -> BotProcess:
        self.wait_logged(READY)
        return self

    def stop(self, *, deadline: float = 30.0) -> int:
        """SIGTERM by PID; the exit code (SIGKILL and a failure if it does not end within ``deadline``)."""
        process, self.process = self.process, None
        if process is None:
            return 0
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
        try:
            return process.wait(timeout=deadline)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
            raise AssertionError(f"the bot did not stop within {deadline:.0f}s of SIGTERM") from None

    def crash(self) -> None:
        """SIGKILL by PID: the bot ends with no chance to save or say anything."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=10)

    # -- what the bot did ----------------------------------------------------------------------------------

    def pet_count(self) -> int:
        """Pets in the bot's sandbox, read from its SQLite file (read-only)."""
        db = self.config.data_dir / "sandbox.db"
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            return int(conn.execute("SELECT count(*) FROM pets").fetchone()[0])

    def sandbox_key(self) -> str:
        return (self.config.data_dir / "api-key").read_text(encoding="ascii").strip()

    def audit(self) -> list[dict[str, Any]]:
        path = self.config.audit_log
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


async def room_with(owner: MatrixUser, bot_id: str, *members: MatrixUser) -> str:
    """A new room of ``owner`` with the bot (joined, by accepting the invite) and ``members`` (joined)."""
    room = await owner.create_room(invite=[bot_id, *(m.user_id for m in members)])
    for member in members:
        await member.join(room)
    await owner.wait_membership(room, bot_id, "join")
    return room


#: The code of a request for approval, in the asker's answer ("... approve ABC123 ...").
APPROVE_CODE = re.compile(r"approve ([A-Z0-9]{6})\b")


async def approve_posted(user: MatrixUser, room: str, told: str, *, bot_id: str) -> str:
    """The request asked elsewhere whose answer to its asker is ``told`` ("... It is posted in matrix:ROOM ...,
    approve CODE"): waits until the bot has posted it in ``room`` (the approvals room), ``!approve``s it as ``user``
    and checks the write was made; its code."""
    found = APPROVE_CODE.search(told)
    assert found is not None and f"It is posted in matrix:{room}" in told, told
    code = found[1]
    await user.wait_for(
        room, lambda evs: any(code in str(e["content"].get("body", "")) for e in from_sender(evs, bot_id))
    )
    approved = await ask(user, room, f"!approve {code}", bot_id=bot_id)
    assert str(approved["body"]).startswith("Added pet "), approved
    return code


def audit_ok(path: Path, code: str) -> dict[str, Any]:
    """The one ``ok`` line of the audit log at ``path`` for held write ``code``."""
    audit = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    [done] = [line for line in audit if line.get("outcome") == "ok" and line.get("pending_code") == code]
    return done


async def ask(user: MatrixUser, room: str, text: str, *, bot_id: str) -> dict[str, Any]:
    """Sends ``text`` as ``user`` and returns the content of the bot's reply to it (waits for it)."""
    asked = await user.send_text(room, text)
    events = await user.wait_for(room, lambda ev: replies_to(ev, asked, sender=bot_id))
    return dict(replies_to(events, asked, sender=bot_id)[0]["content"])


def answered_once(events: list[Event], bot_id: str) -> list[Event]:
    """The bot's messages in ``events``; fails if two of them answer the same message."""
    mine = from_sender(events, bot_id)
    asked = [e["content"].get("m.relates_to", {}).get("m.in_reply_to", {}).get("event_id") for e in mine]
    asked = [a for a in asked if a]
    assert len(asked) == len(set(asked)), f"a message was answered twice: {asked}"
    return mine


@contextlib.asynccontextmanager
async def logins(
    homeserver: str, accounts: Mapping[str, Account]
) -> AsyncIterator[Callable[[str], Awaitable[MatrixUser]]]:
    """``await login("alice")``: a fresh login of that account; every one is closed at the end."""
    made: list[MatrixUser] = []

    async def login(name: str) -> MatrixUser:
        account = accounts[name]
        user = await MatrixUser.login(base_url=homeserver, user_id=account.user_id, password=account.password)
        made.append(user)
        return user

    try:
        yield login
    finally:
        for user in made:
            await user.aclose()


@contextlib.contextmanager
def running_bot(config: BotConfig, *, password: str) -> Iterator[BotProcess]:
    """A started bot, ready; stopped at the end, which must end it with exit code 0."""
    bot = BotProcess(config, password=password).start()
    try:
        bot.ready()
        yield bot
    finally:
        code = bot.stop()
    assert code == 0, bot.log()[-3000:]
