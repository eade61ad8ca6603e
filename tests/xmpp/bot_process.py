"""The real ``petstore bot xmpp`` as a subprocess: tests/matrix's :class:`~matrix.bot_process.BotProcess` on
tests/matrix's :class:`~matrix.bot_process.BotConfig` with no Matrix section and ``[bot.xmpp]`` on the test Prosody
(plain on loopback; the password in the environment only)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matrix.bot_process import BotConfig, BotProcess


def xmpp_config(
    *,
    jid: str,
    port: int,
    root: Path,
    rooms: Sequence[str] = (),
    extra: dict[str, dict[str, Any]] | None = None,
    **fields: Any,
) -> BotConfig:
    """The config of a bot logged in as ``jid`` to the test Prosody on ``port``, in ``rooms``; ``extra`` sections
    (or keys of ``[bot.xmpp]``) merged over these; ``fields``: the rest of :class:`BotConfig` (roles, ...)."""
    xmpp = {"jid": jid, "rooms": list(rooms), "server": "127.0.0.1", "port": port, "tls": "off"}
    sections: dict[str, dict[str, Any]] = {"bot.xmpp": xmpp}
    for name, values in (extra or {}).items():
        sections[name] = {**sections.get(name, {}), **values}
    return BotConfig(homeserver="", user_id="", root=root, extra=sections, **fields)


class XmppBotProcess(BotProcess):
    """One running ``petstore bot xmpp``."""

    platform = "xmpp"
