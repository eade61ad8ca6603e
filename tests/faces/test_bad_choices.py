"""A bad choice is one line wherever it is typed: what was wrong, what is allowed, where the usage is (no usage
dumped above it; ``--env nope`` once printed six lines of global usage). In-process, through ``main(argv)``."""

from __future__ import annotations

import pytest

from petstore_cli.main import main

FORMATS = "(choose from 'table', 'plain', 'tsv', 'csv', 'json', 'jsonl')"
ENVS = "(choose from 'sandbox', 'staging', 'production', 'custom')"


@pytest.mark.parametrize(
    ("words", "line"),
    [
        (["--format", "xml", "list"], f"petstore list: argument --format: invalid choice: 'xml' {FORMATS}"),
        (["list", "--format", "xml"], f"petstore list: argument --format: invalid choice: 'xml' {FORMATS}"),
        (
            ["run", "--format", "xml", "-c", "/list"],
            f"petstore run: argument --format: invalid choice: 'xml' {FORMATS}",
        ),
        (["approvals", "--format", "xml"], f"petstore approvals: argument --format: invalid choice: 'xml' {FORMATS}"),
        (["--env", "nope"], f"petstore: argument --env: invalid choice: 'nope' {ENVS}"),
        (["--env", "nope", "chat"], f"petstore: argument --env: invalid choice: 'nope' {ENVS}"),
        (["chat", "--env", "nope"], f"petstore chat: argument --env: invalid choice: 'nope' {ENVS}"),
        (["list", "--env", "nope"], f"petstore list: argument --env: invalid choice: 'nope' {ENVS}"),
        (
            ["bot", "teams"],
            "petstore bot: argument PLATFORM: invalid choice: 'teams' (choose from 'matrix', 'irc', 'slack', 'xmpp')",
        ),
        (
            ["completion", "tcsh"],
            "petstore completion: argument shell: invalid choice: 'tcsh' (choose from 'bash', 'zsh', 'fish')",
        ),
    ],
)
def test_a_bad_choice_is_one_line_saying_what_is_allowed(
    words: list[str], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as ended:
        main(words)
    out = capsys.readouterr()
    command = line.split(":", 1)[0]
    assert (ended.value.code, out.out) == (2, "")
    assert out.err == f"{line}; {command} --help shows the usage\n"
