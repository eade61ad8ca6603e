"""The bot's wiring, in-process: what a pause in chat may hold."""

from __future__ import annotations

from pathlib import Path

from bot_commands.commands import CHAT_SLEEP_MAX
from petstore_bot.assembly import build_core
from petstore_bot.settings import BotSettings
from petstore_bot.testing import ChatRoom

from .service import sandbox_service


async def test_a_long_pause_in_chat_is_refused_and_a_short_one_runs(tmp_path: Path) -> None:
    composition = sandbox_service(tmp_path / "sandbox", audit=None)
    settings = BotSettings.model_validate({"rate_limit": "off"})
    room = ChatRoom(build_core(composition, settings, platform="test").handle)
    try:
        assert await room.text("@anyone:test", "!sleep 60") == (
            f"Not allowed: !sleep in chat is at most {CHAT_SLEEP_MAX:g} s: a pause holds your next commands"
        )
        assert await room.text("@anyone:test", "!sleep 0") == "(paused 0 s)"
    finally:
        await composition.aclose()
