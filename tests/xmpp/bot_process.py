"""The real ``petstore bot xmpp`` as a subprocess: tests/matrix's :class:`~matrix.bot_process.BotProcess` on an
XMPP config (``[bot.xmpp]`` on the test Prosody, plain on loopback; the password in the environment only)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from matrix.bot_process import BotProcess, _toml


@dataclass
class XmppBotConfig:
    """What goes into the config file; everything on disk lives under ``root``."""

    jid: str
    port: int
    root: Path
    rooms: Sequence[str] = ()
    operators: Sequence[str] = ()
    viewers: Sequence[str] = ()
    default_role: str = "none"
    confirm_writes: bool = True
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
                "rate_limit": "off",
                "audit_log": str(self.audit_log),
            },
            "bot.roles": {"operators": list(self.operators), "viewers": list(self.viewers)},
            "bot.xmpp": {
                "jid": self.jid,
                "rooms": list(self.rooms),
                "server": "127.0.0.1",
                "port": self.port,
                "tls": "off",
            },
        }
        for name, values in self.extra.items():
            sections.setdefault(name, {}).update(values)
        return "".join(
            f"[{name}]\n" + "".join(f"{key} = {_toml(value)}\n" for key, value in values.items()) + "\n"
            for name, values in sections.items()
        )


class XmppBotProcess(BotProcess):
    """One running ``petstore bot xmpp``."""

    platform = "xmpp"
