"""Which messages are commands, as people type them in chat, and the help line generated from the same rules."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot_commands.commands import default_registry
from petstore_bot.addressing import Addressing, strip_reply_fallback
from petstore_bot.assembly import build_core
from petstore_bot.core import BotCore
from petstore_bot.matrix import matrix_names
from petstore_bot.rules import accept_invite
from petstore_bot.testing import ChatRoom

from .service import bot_settings, sandbox_service


@contextlib.asynccontextmanager
async def matrix_bot(tmp_path: Path, bot: str = "", *, named: bool = True) -> AsyncIterator[BotCore]:
    """The Matrix bot's core on the sandbox, ``bot`` more lines of its [bot] table, named petbot (or not)."""
    config = tmp_path / "petstore.toml"
    config.write_text(f'[sandbox]\ndata_dir = "{tmp_path / "sandbox"}"\n[bot]\n{bot}\n', encoding="utf-8")
    settings = bot_settings(config)
    composition = sandbox_service(tmp_path / "sandbox", audit=tmp_path / "audit.ndjson")
    names = matrix_names("@petbot:example.org") if named else ()
    try:
        yield build_core(composition, settings, platform="matrix", names=names)
    finally:
        await composition.aclose()


RULES = Addressing(
    prefix="!", commands=frozenset(default_registry().names()), names=matrix_names("@petbot:example.org")
)


@pytest.mark.parametrize(
    ("text", "direct", "also", "line"),
    [
        ("!list sold", False, (), "!list sold"),
        ("   !list", False, (), "!list"),
        ("!/list", False, (), "!/list"),
        ("petbot: list sold", False, (), "!list sold"),
        ("petbot list", False, (), "!list"),
        ("PetBot, !list", False, (), "!list"),
        ("@petbot:example.org: more", False, (), "!more"),
        ("Pet Bot: list", False, ("Pet Bot",), "!list"),
        ("> <@alice:example.org> !list\n> sold\n\n!more", False, (), "!more"),
        ("> <@alice:example.org> hi\n\n  petbot: get 3", False, (), "!get 3"),
        ("list sold", True, (), "!list sold"),
        ("/list", True, (), "!list"),
        ("  help add", True, (), "!help add"),
        # not commands
        ("list sold", False, (), None),
        ("petbot is great", False, (), None),
        ("petbotty: list", False, (), None),
        ("thanks!", True, (), None),
        ("! list", False, (), None),
        ("petbot:", False, (), None),
        ("", True, (), None),
    ],
)
def test_a_message_is_a_command_by_prefix_mention_or_alone_in_a_direct_chat(
    text: str, direct: bool, also: tuple[str, ...], line: str | None
) -> None:
    assert RULES.line(text, direct=direct, also=also) == line


def test_a_slash_command_bot_takes_no_bare_commands_and_its_rules_say_so() -> None:
    slack = Addressing(prefix="/pets ", commands=RULES.commands, bare_in_direct=False)
    assert slack.line("list", direct=True) is None
    assert slack.line("/pets list") == "/pets list"
    assert slack.rules() == "Start a command with /pets (/pets list sold). /pets help COMMAND explains one."
    assert (
        slack.rules(example="whoami") == "Start a command with /pets (/pets whoami). /pets help COMMAND explains one."
    )


def test_only_the_leading_quote_of_a_reply_is_a_fallback() -> None:
    assert strip_reply_fallback("> quoted\n\n!list") == "!list"
    assert strip_reply_fallback("!list\n> not a fallback") == "!list\n> not a fallback"


async def test_help_in_chat_says_how_to_address_the_bot_and_names_commands_with_its_prefix(tmp_path: Path) -> None:
    async with matrix_bot(tmp_path, 'rate_limit = "off"') as core:
        room = ChatRoom(core.handle)
        text = await room.text("@anyone:test", "!help")
        assert "with or without" not in text
        assert text.endswith(core.addressing.rules())
        assert "petbot: list sold" in text and "in a direct message the command alone works" in text
        assert "Show the next page of the last !list" in text
        assert "in a chat bot at most 2" in await room.text("@anyone:test", "!help sleep")


async def test_direct_chats_are_joined_for_any_role_and_rooms_for_operators_only(tmp_path: Path) -> None:
    bot = 'default_role = "none"\n[bot.roles]\noperators = ["@op:t"]\nviewers = ["@viewer:t"]'
    async with matrix_bot(tmp_path, bot, named=False) as core:
        joins = {
            (who, direct): accept_invite(core.roles, who, direct, "!room:t")
            for who in ("@op:t", "@viewer:t", "@x:t")
            for direct in (True, False)
        }
        assert joins == {
            ("@op:t", True): True,
            ("@op:t", False): True,
            ("@viewer:t", True): True,
            ("@viewer:t", False): False,
            ("@x:t", True): False,
            ("@x:t", False): False,
        }


async def test_help_rules_show_only_a_command_the_asker_may_run(tmp_path: Path) -> None:
    """The rules line of help is the bot's own addressing, its example a command of the asker's role."""
    bot = 'rate_limit = "off"\ndefault_role = "none"\n[bot.roles]\nviewers = ["@viewer:test"]'
    async with matrix_bot(tmp_path, bot) as core:
        room = ChatRoom(core.handle)
        nobody, viewer = await room.text("@nobody:test", "!help"), await room.text("@viewer:test", "!help")
        assert nobody.splitlines()[-1] == (
            "Start a command with ! (!whoami), or name me first (petbot: whoami); "
            "in a direct message the command alone works (whoami). !help COMMAND explains one."
        )
        assert "list" not in nobody, "role none may not list: no example, no entry names it"
        assert viewer.splitlines()[-1] == core.addressing.rules(example="list sold")
        assert "(petbot: list sold)" in viewer
