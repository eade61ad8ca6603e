"""The `petstore` entry point: --version, --help, one-line errors, no traceback."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_support import petstore_main
from python_support import python_run

ROOT = Path(__file__).resolve().parents[1]


def petstore(*args: str, env: dict[str, str] | None = None, stdin: str = "") -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    return petstore_main(*args, env={**base, **(env or {})}, stdin=stdin)


def test_version() -> None:
    out = petstore("--version")
    assert out.returncode == 0
    assert out.stdout.strip() == "petstore 0.1.0"


@pytest.mark.parametrize("command", [[], ["tui"], ["chat"], ["run"], ["serve"]])
def test_help_of_each_command_is_complete(command: list[str]) -> None:
    out = petstore(*command, "--help")
    assert out.returncode == 0 and out.stderr == ""
    assert "usage: petstore" in out.stdout
    if command != ["serve"]:
        for flag in ("--env", "--base-url", "--config"):
            assert flag in out.stdout


def test_unknown_environment_is_one_line_with_allowed_values() -> None:
    out = petstore("run", "--env", "moon", "-c", "/list")
    assert out.returncode == 2
    assert "invalid choice: 'moon'" in out.stderr and "production" in out.stderr
    assert "Traceback" not in out.stderr


def test_bad_config_file_is_one_line(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[http]\ntimeout = 'soon'\n")
    out = petstore("run", "--config", str(cfg), "-c", "/list")
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0
    assert "c.toml: http.timeout" in out.stderr and "Traceback" not in out.stderr


def test_named_environment_without_address_says_what_to_do() -> None:
    out = petstore("run", "--env", "production", "-c", "/list", env={"XDG_CONFIG_HOME": "/nonexistent"})
    assert out.returncode == 2
    assert "PETSTORE_PRODUCTION__BASE_URL" in out.stderr and "Traceback" not in out.stderr


def test_the_chat_prompt_comes_up_before_anything_heavy_is_imported() -> None:
    """petstore_cli.chat_start and .prompt load prompt_toolkit only; the session is built behind the prompt."""
    code = (
        "import sys\n"
        "import petstore_cli.chat_start, petstore_cli.prompt\n"
        "heavy = {'textual', 'httpx', 'pydantic', 'pydantic_settings', 'rich', 'starlette', 'uvicorn'}\n"
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))\n"
    )
    out = python_run(code)
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
@pytest.mark.parametrize(("environ", "seen"), [({}, "__all__"), ({"PYDANTIC_DISABLE_PLUGINS": ""}, "")])
def test_the_program_turns_pydantic_plugins_off_unless_told_otherwise(environ: dict[str, str], seen: str) -> None:
    """petstore uses no pydantic plugins: the program sets pydantic's own switch (sparing the scan of
    every installed package for them), and keeps a value set by the user, even an empty one."""
    code = (
        "import os, sys\n"
        "from petstore_cli.main import main\n"
        "sys.argv = ['petstore', '--help']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(repr(os.environ.get('PYDANTIC_DISABLE_PLUGINS')), file=sys.stderr)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"} | environ
    out = python_run(code, env=env)
    assert out.stderr.strip() == repr(seen)


def test_the_cli_exit_codes_are_the_command_layers() -> None:
    from bot_commands import errors
    from petstore_cli import exits

    assert (exits.EXIT_OK, exits.EXIT_FAILED, exits.EXIT_USAGE) == (
        errors.EXIT_OK,
        errors.EXIT_FAILED,
        errors.EXIT_USAGE,
    )


@pytest.mark.parametrize(
    "words",
    [
        [],
        ["--env", "production"],
        ["--theme", "nord", "-v", "-v"],
        ["--read-only"],
        ["--config", "c.toml", "--base-url", "http://x/v1", "--sandbox-reset"],
        ["tui", "--play", "demo.pets"],
        ["--env", "staging", "chat"],
    ],
)
def test_parsing_without_the_commands_parser_reads_what_the_whole_parser_reads(words: list[str]) -> None:
    """`petstore` with no command word (the TUI) skips building every command's parser: same namespace."""
    from petstore_cli.options import build_parser, parse

    assert vars(parse(words)) == vars(build_parser().parse_args(words))


@pytest.mark.parametrize(
    ("words", "says"),
    [
        (["--bogus"], "unrecognized arguments: --bogus"),
        (
            ["--env", "nope"],
            "argument --env: invalid choice: 'nope' (choose from 'sandbox', 'staging', 'production', 'custom')",
        ),
    ],
)
def test_a_usage_error_without_a_command_word_is_one_line_that_points_at_the_usage(
    words: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from petstore_cli.options import parse

    with pytest.raises(SystemExit) as ended:
        parse(words)
    err = capsys.readouterr().err
    assert ended.value.code == 2 and err == f"petstore: {says}; petstore --help shows the usage\n"
