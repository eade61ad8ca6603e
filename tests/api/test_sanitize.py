"""``visible``: its shortcut for printable text never skips a character the table replaces; every invisible format
character (Unicode Cf) is shown, except the joiners and tags inside one emoji."""

from __future__ import annotations

import sys
import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from petstore_api.sanitize import _EMOJI, _TABLE, _TABLE_KEEP_NEWLINES, visible

# Text that mixes every replaced character with ordinary and astral ones.
_REPLACED = st.sampled_from([chr(c) for c in _TABLE])
_TEXT = st.lists(st.one_of(_REPLACED, st.characters()), max_size=30).map("".join)


def test_every_replaced_character_is_outside_isprintable() -> None:
    assert not any(chr(c).isprintable() for c in _TABLE)


def test_every_format_character_of_this_python_is_replaced() -> None:
    """Category Cf as this Python's Unicode database has it (the table holds Unicode 15's)."""
    found = {c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"}
    assert found - set(_TABLE) == set()


@given(_TEXT)
def test_visible_equals_the_full_translation_outside_emoji(text: str) -> None:
    if _EMOJI.search(text):  # a joiner or tags within one emoji are kept: see the test below
        return
    assert visible(text) == text.translate(_TABLE)
    assert visible(text, keep_newlines=True) == text.translate(_TABLE_KEEP_NEWLINES)
    assert not any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in visible(text))


def test_printable_text_comes_back_as_is_and_escapes_do_not() -> None:
    assert visible("Rex 🐕 é") == "Rex 🐕 é"
    assert visible("a\x1b[31mb\u202e") == "a␛[31mb<U+202E>"
    assert visible(7) == "7"


def test_invisible_characters_are_shown_and_emoji_stay_whole() -> None:
    assert visible("Zero\u200bWidth") == "Zero<U+200B>Width"
    assert visible("\u202eevil\u2066x\u2069") == "<U+202E>evil<U+2066>x<U+2069>"
    assert visible("soft\u00adhy\u2060phen\ufeff") == "soft<U+00AD>hy<U+2060>phen<U+FEFF>"
    assert visible("Zero\u200dWidth\u200c") == "Zero<U+200D>Width<U+200C>"  # a joiner between letters hides
    assert visible("hi\U000e0041\U000e0042") == "hi<U+E0041><U+E0042>"  # ASCII smuggled in tag characters
    family, rainbow = "\U0001f468\u200d\U0001f469\u200d\U0001f467", "\U0001f3f3\ufe0f\u200d\U0001f308"
    england = "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f"
    assert visible(f"{family} {rainbow} {england}") == f"{family} {rainbow} {england}"
    assert visible(f"\u200b{family}\u200b") == f"<U+200B>{family}<U+200B>"
