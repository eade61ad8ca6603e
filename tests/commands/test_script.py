"""Scripts: comments, blank lines, line numbers; and /history's replayable form."""

from __future__ import annotations

from pathlib import Path

from bot_commands.script import HistoryEntry, command_word, history_script, parse_script, read_script


def test_comments_and_blank_lines_are_skipped_and_numbers_kept(tmp_path: Path) -> None:
    text = "\ufeff# tour\n\n/list sold\n   # indented comment\n  /get 3  \r\n/add '#1' --category 2\n"
    expected = [(3, "/list sold"), (5, "/get 3"), (6, "/add '#1' --category 2")]
    assert parse_script(text) == expected
    path = tmp_path / "s.txt"
    path.write_bytes(text.encode("utf-8"))
    assert read_script(path) == expected
    assert parse_script(["/list\n", "# x\n", "/env\n"]) == [(1, "/list"), (3, "/env")]


def test_command_word() -> None:
    assert command_word("/expect count 3") == "expect" and command_word("EXPECT ok") == "expect"
    assert command_word("/list") == "list" and command_word("") == ""


def test_failed_commands_become_comments_unless_an_expect_follows() -> None:
    entries = [
        HistoryEntry("/list", True, "list"),
        HistoryEntry("/get 9", False, "get"),
        HistoryEntry("/get 8", False, "get"),
        HistoryEntry("/expect error 404", True, "expect"),
        HistoryEntry("/get 7", False, "get"),
    ]
    assert history_script(entries) == ["/list", "# failed: /get 9", "/get 8", "/expect error 404", "# failed: /get 7"]
