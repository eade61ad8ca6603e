"""``petstore bot``'s wiring, in-process: where the audit goes, what a pause in chat may hold."""

from __future__ import annotations

from pathlib import Path

from petstore_bot.testing import ChatRoom
from petstore_cli.bot import CHAT_SLEEP_MAX, build_core, compose_bot
from petstore_cli.settings.load import load_settings


def _settings(tmp_path: Path, extra: str = ""):
    config = tmp_path / "petstore.toml"
    config.write_text(
        f'[sandbox]\ndata_dir = "{tmp_path / "sandbox"}"\n[bot]\nrate_limit = "off"\n'
        f'audit_log = "{tmp_path / "bot-audit.ndjson"}"\n{extra}',
        encoding="utf-8",
    )
    return load_settings(config_path=config).settings


async def test_the_bot_audit_log_wins_over_the_terminal_one_and_the_flag_over_both(tmp_path: Path) -> None:
    settings = _settings(tmp_path, f'[audit]\npath = "{tmp_path / "terminal-audit.ndjson"}"\n')
    for flag, expected in ((None, tmp_path / "bot-audit.ndjson"), (tmp_path / "flag.ndjson", tmp_path / "flag.ndjson")):
        composition = compose_bot(settings, sandbox_reset=True, audit_flag=flag)
        try:
            assert composition.audit is not None and composition.audit.path == expected
        finally:
            await composition.aclose()


async def test_a_long_pause_in_chat_is_refused_and_a_short_one_runs(tmp_path: Path) -> None:
    settings = _settings(tmp_path, "[bot.roles]\noperators = []\n")
    composition = compose_bot(settings, sandbox_reset=True)
    room = ChatRoom(build_core(composition, settings.bot, platform="test").handle)
    try:
        assert await room.text("@anyone:test", "!sleep 60") == (
            f"Not allowed: !sleep in chat is at most {CHAT_SLEEP_MAX:g} s: a pause holds your next commands"
        )
        assert await room.text("@anyone:test", "!sleep 0") == "(paused 0 s)"
    finally:
        await composition.aclose()
