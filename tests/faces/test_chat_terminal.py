"""The chat at a terminal, driven through prompt_toolkit's pipe input: text wrapped at word boundaries, a 401 that
asks for the key (masked, never echoed, never in the history) and runs the line again, long output through the
pager, ``--format`` inside the chat. The session is on the real sandbox service (in-process); the pager is a real
shell command. One subprocess test drives ``petstore chat`` through its real entry point."""

from __future__ import annotations

import asyncio
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from cli_support import run_petstore
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.vt100 import Vt100_Output
from rich.console import Console

from bot_commands.commands import default_registry
from bot_commands.results import EnvInfo
from bot_commands.session import CommandSession
from petstore_api.client import PetStoreClient
from petstore_cli.chat import ChatLoop
from petstore_cli.prompt import PromptEditor

BASE = "http://sandbox.localhost/v1"
ENTER, CTRL_D = "\r", "\x04"
ROOT = Path(__file__).resolve().parents[2]


def session_with(key: str, transport: Any) -> CommandSession:
    client = PetStoreClient(base_url=BASE, api_key=key, transport=transport, allow_insecure_http=True)
    env = EnvInfo(env="sandbox", base_url=BASE, masked_key="sk-...", sandbox=True)
    return CommandSession(client, env=env, registry=default_registry())


def chat(
    session: CommandSession,
    keys: str,
    *,
    width: int = 60,
    height: int = 24,
    pager: str | None = None,
    history: Path | None = None,
) -> tuple[str, str]:
    """Type ``keys`` into the chat at a ``width`` x ``height`` terminal: (what the chat printed, what the prompt drew)."""
    printed, drawn = io.StringIO(), io.StringIO()
    console = Console(file=printed, width=width, height=height, force_terminal=True, color_system=None)
    with create_pipe_input() as pipe, asyncio.Runner() as runner:
        screen = Vt100_Output(drawn, lambda: Size(rows=height, columns=width), term="xterm", enable_cpr=False)
        editor = PromptEditor(session, history_path=history, runner=runner, input=pipe, output=screen)
        pipe.send_text(keys + CTRL_D)
        loop = ChatLoop(
            session,
            console=console,
            runner=runner,
            read=editor.read,
            interactive=True,
            greet=False,
            ask_secret=editor.read_secret,
            pager=pager,
        )
        assert loop.run() == 0
        runner.run(session.client.aclose())
    return printed.getvalue(), drawn.getvalue()


def test_errors_wrap_at_word_boundaries_to_the_width(sandbox: Any, transport: Any) -> None:
    session = session_with(sandbox.api_key, transport)
    printed, _ = chat(session, "/list --limit 0 --status adopted" + ENTER, width=40)
    assert session.last_outcome is not None and session.last_outcome.failure is not None
    said = session.last_outcome.failure.text
    lines = printed.rstrip("\n").splitlines()
    assert len(said) > 80 and len(lines) > 2 and all(len(line) <= 40 for line in lines)
    assert printed.split() == said.split()  # every word whole: the breaks fall between words


def test_a_401_asks_for_the_key_masked_and_runs_the_line_again(sandbox: Any, transport: Any, tmp_path: Path) -> None:
    session = session_with("sk-wrong-key-0000000000", transport)
    key = sandbox.api_key
    history = tmp_path / "history"
    printed, drawn = chat(session, "/list sold" + ENTER + key + ENTER, history=history)
    assert "HTTP 401" in printed and "Using the new key for this session." in printed
    assert "Goldie" in printed.split("Using the new key")[1]  # the line ran again, with the key
    assert key not in printed and key not in drawn and drawn.count("*") >= len(key)  # masked as typed
    assert key not in history.read_text() and "/list sold" in history.read_text()
    assert session.env.masked_key != "sk-..." and key not in session.env.masked_key


def test_a_401_with_no_key_given_goes_on(sandbox: Any, transport: Any) -> None:
    session = session_with("sk-wrong-key-0000000000", transport)
    printed, _ = chat(session, "/list" + ENTER + ENTER + "/env" + ENTER)
    assert printed.count("HTTP 401") == 1 and "Using the new key" not in printed and "environment" in printed


def test_output_taller_than_the_terminal_goes_through_the_pager(sandbox: Any, transport: Any, tmp_path: Path) -> None:
    paged = tmp_path / "paged.txt"
    session = session_with(sandbox.api_key, transport)
    printed, _ = chat(session, "/list --all" + ENTER + "/get 1" + ENTER, height=10, pager=f"cat > '{paged}'")
    assert "Whiskers" in paged.read_text() and "12 pets" in paged.read_text()  # the whole list, in the pager
    assert "Whiskers" not in printed and "categoryId" in printed  # /get fits: on the screen, not paged


def test_format_inside_the_chat(sandbox: Any, transport: Any) -> None:
    session = session_with(sandbox.api_key, transport)
    printed, _ = chat(
        session, "/list sold --format csv" + ENTER + "/list pending --fields id,name --format json" + ENTER
    )
    assert "id,name,categoryId,status\n4,Goldie,4,sold\n" in printed
    assert '"name": "Tweety"' in printed and '"status"' not in printed


def test_format_inside_the_piped_chat(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PETSTORE_", "PAGER"))}
    env |= {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data"), "PAGER": "false"}
    done = run_petstore("chat", env=env, stdin="/list sold --format tsv\n/list --all\n")
    assert done.returncode == 0, done.stderr
    assert "id\tname\tcategoryId\tstatus\n4\tGoldie\t4\tsold\n" in done.stdout
    assert "Whiskers" in done.stdout  # piped: never through the pager


def test_piped_chat_never_wraps_an_error(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
    env |= {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data"), "COLUMNS": "40"}
    done = subprocess.run(
        [sys.executable, "-m", "petstore_cli", "chat"],
        input="/list --limit 0 --status adopted\n",
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert done.returncode == 0 and len(done.stdout.splitlines()) == 1 and len(done.stdout) > 80  # one line, whole


def test_invisible_characters_in_a_name_are_shown_at_the_prompt(sandbox: Any, transport: Any) -> None:
    pet = sandbox.store.create_pet(name="Zero\u200bWidth \u202eevil", category_id=1, status="sold")
    session = session_with(sandbox.api_key, transport)
    printed, _ = chat(session, f"/get {pet['id']}" + ENTER + "/list sold" + ENTER, width=100)
    assert printed.count("Zero<U+200B>Width <U+202E>evil") == 2, printed
    assert "\u200b" not in printed and "\u202e" not in printed
