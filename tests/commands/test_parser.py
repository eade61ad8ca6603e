"""The tokenizer: shell quoting, chat-app typography, one UsageError for everything wrong."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot_commands.errors import UsageError
from bot_commands.parser import join_command, split_command, tokenize


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ('/add "Rex the Dog" --category 3', ["/add", "Rex the Dog", "--category", "3"]),
        ("/add 'Rex the Dog' --category 3", ["/add", "Rex the Dog", "--category", "3"]),
        ("/add \u201cRex the Dog\u201d \u2014category 3", ["/add", "Rex the Dog", "--category", "3"]),
        ("/add \u2018Rex\u2019 \u2013status sold", ["/add", "Rex", "--status", "sold"]),
        ("/add Rex\u2019s --category 1", ["/add", "Rex\u2019s", "--category", "1"]),
        ('/add name="Rex the Dog" categoryId=3', ["/add", "name=Rex the Dog", "categoryId=3"]),
        ("/list\u00a0sold", ["/list", "sold"]),
        ("  /list   sold  ", ["/list", "sold"]),
        ("/add '#1 pet' --category 2", ["/add", "#1 pet", "--category", "2"]),
        ("/add \u2014 --category 2", ["/add", "\u2014", "--category", "2"]),
    ],
)
def test_tokenize(line: str, words: list[str]) -> None:
    assert tokenize(line) == words


@pytest.mark.parametrize("line", ['/add "Rex --category 3', "/add 'Rex", "/list \\"])
def test_unclosed_quote_or_lone_backslash_is_a_usage_error(line: str) -> None:
    with pytest.raises(UsageError) as info:
        tokenize(line)
    assert "\n" not in str(info.value)


def test_unclosed_quote_message_names_the_problem() -> None:
    with pytest.raises(UsageError, match="unclosed quote"):
        tokenize('/add "Rex')


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("/list sold", ("list", ["sold"], True)),
        ("LIST sold", ("list", ["sold"], False)),
        ("/Get 3", ("get", ["3"], True)),
    ],
)
def test_split_command_with_or_without_slash(line: str, expected: tuple[str, list[str], bool]) -> None:
    assert split_command(line) == expected


@pytest.mark.parametrize("line", ["", "   ", "/", "//"])
def test_empty_commands_are_usage_errors(line: str) -> None:
    with pytest.raises(UsageError):
        split_command(line)


@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")), max_size=5))
def test_join_command_round_trips(words: list[str]) -> None:
    line = join_command("add", *words)
    parsed = tokenize(line)
    assert parsed[0] == "/add"
    # Words survive as written (smart quotes too); a leading em-dash becomes -- on purpose.
    assert parsed[1:] == [re.sub(r"^[\u2014\u2013\u2012\u2015]-?(?=[A-Za-z])", "--", w) for w in words]


@given(st.text(max_size=200))
def test_tokenize_raises_only_usage_errors(line: str) -> None:
    try:
        words = tokenize(line)
    except UsageError as exc:
        assert "\n" not in str(exc)
    else:
        assert all(isinstance(w, str) for w in words)


@given(st.text(alphabet=st.characters(blacklist_characters="\"'\\")))
def test_the_fast_split_agrees_with_shlex(text: str) -> None:
    import shlex

    from bot_commands.parser import _shlex

    lexer = shlex.shlex(text, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    assert _shlex(text) == list(lexer)


def _reference_shlex(text: str) -> list[str] | str:
    import shlex

    lexer = shlex.shlex(text, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError as exc:
        return str(exc)


@given(st.text(alphabet=st.sampled_from(list("ab \t\n\"'é-=#") + ["\u00a0", "\u2003"]), max_size=40))
def test_the_quoted_fast_split_agrees_with_shlex(text: str) -> None:
    """Lines with quotes but no backslash skip shlex: same words, same unclosed-quote error."""
    from bot_commands.parser import _shlex

    try:
        ours: list[str] | str = _shlex(text)
    except ValueError as exc:
        ours = str(exc)
    assert ours == _reference_shlex(text)


def test_smart_quotes_inside_ascii_quotes_are_kept() -> None:
    assert tokenize("/add '‘Rex’' --category 1") == ["/add", "‘Rex’", "--category", "1"]
    assert tokenize(join_command("add", "‘", "“x”")) == ["/add", "‘", "“x”"]
    # chat-app typography still works, with and without an ASCII apostrophe
    assert tokenize("/add “Rex the Dog” --category 1") == ["/add", "Rex the Dog", "--category", "1"]
    assert tokenize("/add “Rex's toy” --category 1") == ["/add", "Rex's toy", "--category", "1"]
    assert tokenize("/add “Rex’s toy” --category 1") == ["/add", "Rex's toy", "--category", "1"]


def test_the_quoted_fast_split_on_typical_lines() -> None:
    from bot_commands.parser import _shlex

    assert _shlex('/add "Rex the Dog" --category 3') == ["/add", "Rex the Dog", "--category", "3"]
    assert _shlex("""/add 'say "hi"'x"" y""") == ["/add", 'say "hi"x', "y"]
    assert _shlex('/add "" 3') == ["/add", "", "3"]
    with pytest.raises(ValueError, match="No closing quotation"):
        _shlex('/add "Rex')
