"""``visible``: its shortcut for printable text never skips a character the table replaces."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from petstore_api.sanitize import _TABLE, _TABLE_KEEP_NEWLINES, visible

# Text that mixes every replaced character with ordinary and astral ones.
_REPLACED = st.sampled_from([chr(c) for c in _TABLE])
_TEXT = st.lists(st.one_of(_REPLACED, st.characters()), max_size=30).map("".join)


def test_every_replaced_character_is_outside_isprintable() -> None:
    assert not any(chr(c).isprintable() for c in _TABLE)


@given(_TEXT)
def test_visible_equals_the_full_translation(text: str) -> None:
    assert visible(text) == text.translate(_TABLE)
    assert visible(text, keep_newlines=True) == text.translate(_TABLE_KEEP_NEWLINES)


def test_printable_text_comes_back_as_is_and_escapes_do_not() -> None:
    assert visible("Rex 🐕 é") == "Rex 🐕 é"
    assert visible("a\x1b[31mb\u202e") == "a␛[31mb<U+202E>"
    assert visible(7) == "7"
