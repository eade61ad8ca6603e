"""A name holding a zero-width space and a right-to-left override is seen as it is: in the subcommand's table
(through ``main(argv)``) and in the chat face, never as a ``ZeroWidth`` that is not what it looks like (the TUI:
tests/tui/test_tui_invisible_names.py; a bot's reply: tests/bot/test_core.py)."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from rich.console import Console

from bot_commands.session import CommandSession
from petstore_cli.chat import run_chat
from petstore_cli.main import main

NAME = "Zero\u200bWidth \u202eevil"
SHOWN = "Zero<U+200B>Width <U+202E>evil"


def test_the_subcommands_table_shows_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert main(["add", NAME, "--category", "1"]) == 0
    added = capsys.readouterr().out
    for words in (["list", "--all"], ["list", "--all", "--format", "table"], ["list", "--all", "--format", "csv"]):
        assert main(words) == 0
        out = capsys.readouterr().out
        assert SHOWN in out and "\u200b" not in out and "\u202e" not in out, words
    assert SHOWN in added


def test_the_chat_shows_them(session: CommandSession) -> None:
    pet_id = asyncio.run(session.client.create_pet(name=NAME, category_id=1)).pet.id
    out = io.StringIO()
    code = run_chat(session, console=Console(file=out, width=100), stdin=io.StringIO(f"/get {pet_id}\n/list --all\n"))
    text = out.getvalue()
    assert code == 0 and text.count(SHOWN) >= 2, text
    assert "\u200b" not in text and "\u202e" not in text
