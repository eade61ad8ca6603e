"""Starting the TUI from the command line: no terminal, --theme, [tui] theme, the history file."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot_commands.history import PromptHistory, is_secret
from petstore_cli.settings.load import load_settings

ROOT = Path(__file__).resolve().parents[2]


def environment(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_") and k != "TEXTUAL_DRIVER"}
    return {**base, "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config")}


@pytest.mark.parametrize("args", [[], ["tui"], ["--theme", "nord"]])
def test_without_a_terminal_one_line_and_exit_2(tmp_path: Path, args: list[str]) -> None:
    out = tmp_path / "out"
    with open(os.devnull) as stdin, out.open("w") as stdout:
        done = subprocess.run(
            [sys.executable, "-m", "petstore_cli", *args],
            cwd=ROOT,
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            env=environment(tmp_path),
        )
    assert done.returncode == 2 and out.read_text() == ""
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("petstore: the TUI needs a terminal")
    assert "petstore run" in done.stderr and "petstore chat" in done.stderr
    assert not (tmp_path / "data").exists()  # stopped before anything started


def on_a_terminal(args: list[str], tmp_path: Path) -> tuple[int, str]:
    """Run petstore with a pseudo-terminal as stdin and stdout (stderr apart)."""
    main, side = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "petstore_cli", *args],
            cwd=ROOT,
            stdin=side,
            stdout=side,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            env=environment(tmp_path),
        )
    finally:
        os.close(side)
        os.close(main)
    return done.returncode, done.stderr


#: A control sequence (the app draws on stderr, as Textual does).
CSI = re.compile(r"\x1b(\[[0-9;?<>=$]*[ -/]*[@-~]|[()][0-9A-Za-z]|[=>78])")


def after_the_app(err: str) -> str:
    """What is written to stderr after the app's last control sequence (it gave the terminal back)."""
    assert "Traceback" not in err
    last = list(CSI.finditer(err))[-1]
    tail = err[last.end() :]
    assert tail.endswith("\n") and tail.count("\n") == 1, tail  # one line
    return tail


@pytest.mark.parametrize("where", ["flag", "config"])
def test_an_unknown_theme_is_one_line_naming_the_allowed_ones(tmp_path: Path, where: str) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[tui]\ntheme = "neon"\n')
    args = ["--theme", "neon"] if where == "flag" else ["--config", str(config)]
    code, err = on_a_terminal(args, tmp_path)
    if where == "flag":  # known before the app starts: nothing drawn
        assert err.count("\n") == 1
    else:  # known once the settings are loaded, behind the first frame
        err = after_the_app(err)
    assert code == 2
    assert err.startswith("petstore: unknown theme 'neon'; one of: ") and "textual-light" in err and "nord" in err


@pytest.mark.slow
@pytest.mark.parametrize(
    ("config", "says"),
    [
        ('[http]\ntimeout = "soon"\n', "petstore: invalid setting "),
        ('env = "production"\n', "petstore: environment 'production' has no base URL"),
        ("this is not toml\n", "petstore: "),
    ],
)
def test_a_bad_configuration_ends_the_tui_with_one_line_and_exit_2(tmp_path: Path, config: str, says: str) -> None:
    """The settings load behind the first frame; a bad one still ends with its line and 2."""
    path = tmp_path / "c.toml"
    path.write_text(config)
    code, err = on_a_terminal(["--config", str(path)], tmp_path)
    line = after_the_app(err)
    assert code == 2 and line.startswith(says), line
    assert str(path) in line or "production" in line
    assert not (tmp_path / "data" / "petstore" / "sandbox").exists()  # no sandbox was opened


def test_tui_theme_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[tui]\ntheme = "nord"\n')
    assert load_settings(config_path=config).settings.tui.theme == "nord"
    monkeypatch.setenv("PETSTORE_TUI__THEME", "gruvbox")
    assert load_settings(config_path=config).settings.tui.theme == "gruvbox"


def test_history_file_format_mode_and_tolerance(tmp_path: Path) -> None:
    path = tmp_path / "petstore" / "history"
    history = PromptHistory(path)
    assert history.load() == []  # missing
    assert history.append("/list sold") and history.append("/add 'a\nb'")
    assert not history.append("/key sk-live-0123456789abcdef") and not history.append("   ")
    text = path.read_text()
    assert text.startswith("\n# ") and "\n+/list sold\n" in text and "\n+/add 'a\n+b'\n" in text
    assert "sk-live" not in text and path.stat().st_mode & 0o777 == 0o600
    assert history.load() == ["/list sold", "/add 'a\nb'"]
    path.write_bytes(b"garbage\xff\n+/get 3\n\n# x\nnot an entry\n+/orders")
    assert PromptHistory(path).load() == ["/get 3", "/orders"]


def test_history_reads_what_prompt_toolkit_writes(tmp_path: Path) -> None:
    file_history = pytest.importorskip("prompt_toolkit.history").FileHistory
    path = tmp_path / "history"
    file_history(str(path)).store_string("/list pending")
    PromptHistory(path).append("/get 1")
    assert PromptHistory(path).load() == ["/list pending", "/get 1"]
    assert list(reversed(list(file_history(str(path)).load_history_strings()))) == ["/list pending", "/get 1"]


@pytest.mark.parametrize("line", ["/key sk-abc", "key abc", "/login me", "/set api_key=abc", "sk-live-0123456789"])
def test_secret_lines_are_recognised(line: str) -> None:
    assert is_secret(line)


def test_ordinary_lines_are_not_secret() -> None:
    assert not any(is_secret(line) for line in ["/list", "/add 'Sky key'", "/get 3", "/keys"])


async def test_files_open_to_others_are_tightened_and_the_tui_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The TUI owns the terminal, so the lines go to its warnings (notified once it is up), not to stderr."""
    from petstore_cli.options import parse
    from petstore_cli.tui_start import build

    for name, value in environment(tmp_path).items():
        monkeypatch.setenv(name, value)
    for name in [n for n in os.environ if n.startswith("PETSTORE_")]:
        monkeypatch.delenv(name)
    history, key = tmp_path / "data" / "petstore" / "history", tmp_path / "data" / "petstore" / "sandbox" / "api-key"
    key.parent.mkdir(parents=True)
    history.write_text("+/list\n")
    key.write_text("sk-sandbox-older-0123456789\n")
    for path in (history, key):
        path.chmod(0o644)
    started = build(parse([]))
    try:
        assert sorted(started.warnings) == [f"tightened {path} to 0600 (it was 0644)" for path in (history, key)]
    finally:
        await started.aclose()
    assert history.stat().st_mode & 0o777 == key.stat().st_mode & 0o777 == 0o600
