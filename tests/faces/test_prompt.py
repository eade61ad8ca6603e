"""The chat's prompt_toolkit line editor, driven by its pipe input: completion, suggestion, Ctrl-R, toolbar, lexer."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.input.base import PipeInput
from prompt_toolkit.output import DummyOutput

from bot_commands.commands import default_registry
from bot_commands.results import EnvInfo
from bot_commands.session import CommandSession
from petstore_api.client import PetStoreClient
from petstore_cli.prompt import CommandLexer, PromptEditor, holds_secret

REGISTRY = default_registry()
BASE = "http://sandbox.localhost/v1"
ENV = EnvInfo(env="sandbox", base_url=BASE, masked_key="sk-...abcd", sandbox=True)
TAB, RIGHT, CTRL_R, ENTER, CTRL_C, CTRL_D = "\t", "\x1b[C", "\x12", "\r", "\x03", "\x04"


@pytest.fixture
def pipe() -> Iterator[PipeInput]:
    with create_pipe_input() as inp, create_app_session(input=inp, output=DummyOutput()):
        yield inp


@pytest.fixture
def client(sandbox: Any, transport: Any) -> PetStoreClient:
    return PetStoreClient(base_url=BASE, api_key=sandbox.api_key, transport=transport, allow_insecure_http=True)


def editor(session: CommandSession, pipe: PipeInput, history: Path | None = None) -> PromptEditor:
    return PromptEditor(session, history_path=history, input=pipe, output=DummyOutput())


def typed(edit: PromptEditor, pipe: PipeInput, *keys: str) -> str:
    """Send ``keys`` one by one (completion runs between them) and return the accepted line."""

    tasks: list[asyncio.Future[str]] = []

    async def go() -> str:
        task = asyncio.ensure_future(edit.prompt_session.prompt_async("> "))
        tasks.append(task)
        for key in keys:
            pipe.send_text(key)
            for _ in range(50):  # let the prompt read the key and finish its completion (in this loop)
                await asyncio.sleep(0)
        return await task

    try:
        return asyncio.run(go())
    except BaseException:  # Ctrl-C / Ctrl-D: the prompt's KeyboardInterrupt or EOFError
        for task in tasks:
            if task.done():
                task.exception()  # retrieved: asyncio does not log it
        raise


def test_tab_completes_commands_flags_and_values(client: PetStoreClient, pipe: PipeInput) -> None:
    edit = editor(CommandSession(client, registry=REGISTRY, env=ENV), pipe)
    assert typed(edit, pipe, "/li", TAB, "--st", TAB, "s", TAB, ENTER).rstrip() == "/list --status sold"


def test_menu_shows_each_command_with_its_summary(client: PetStoreClient) -> None:
    from prompt_toolkit.completion import CompleteEvent
    from prompt_toolkit.document import Document

    session = CommandSession(client, registry=REGISTRY, env=ENV)
    session._remember((42,))
    completer = PromptEditor(session, history_path=None, output=DummyOutput()).prompt_session.completer
    assert completer is not None
    menu = {c.display_text: c.display_meta_text for c in completer.get_completions(Document("/h"), CompleteEvent())}
    assert menu == {
        "/help": "List the commands, or explain one",
        "/history": "Show this session's commands, or save them as a script",
    }
    flags = {
        c.display_text: c.display_meta_text for c in completer.get_completions(Document("/list --"), CompleteEvent())
    }
    assert flags["--limit"] == "pets per page, 1 to 100" and "--all" in flags
    ids = list(completer.get_completions(Document("/get "), CompleteEvent()))
    assert [(c.text, c.display_meta_text) for c in ids] == [("42 ", "a pet id seen in this session")]


def test_tab_after_only_spaces_offers_the_commands(client: PetStoreClient, pipe: PipeInput) -> None:
    edit = editor(CommandSession(client, registry=REGISTRY, env=ENV), pipe)
    assert typed(edit, pipe, " ", TAB, ENTER).strip() == "/list"


def test_right_arrow_takes_the_suggestion_from_history(client: PetStoreClient, pipe: PipeInput, tmp_path: Path) -> None:
    path = tmp_path / "history"
    session = CommandSession(client, registry=REGISTRY, env=ENV)
    first = editor(session, pipe, path)
    assert typed(first, pipe, "/list sold --limit 2", ENTER) == "/list sold --limit 2"
    again = editor(session, pipe, path)  # a new chat reads the same file
    assert typed(again, pipe, "/list s", RIGHT, ENTER) == "/list sold --limit 2"


def test_ctrl_r_searches_the_history(client: PetStoreClient, pipe: PipeInput, tmp_path: Path) -> None:
    path = tmp_path / "history"
    session = CommandSession(client, registry=REGISTRY, env=ENV)
    edit = editor(session, pipe, path)
    for line in ("/orders", "/get 7", "/env"):
        assert typed(edit, pipe, line, ENTER) == line
    assert typed(edit, pipe, CTRL_R, "get", ENTER, ENTER) == "/get 7"


def test_history_file_keeps_no_line_with_a_key_and_is_private(
    client: PetStoreClient, pipe: PipeInput, tmp_path: Path
) -> None:
    path = tmp_path / "data" / "history"
    edit = editor(CommandSession(client, registry=REGISTRY, env=ENV), pipe, path)
    typed(edit, pipe, "/env", ENTER)
    typed(edit, pipe, "/add sk-live-0123456789abcdef --category 1", ENTER)
    text = path.read_text()
    assert "+/env" in text and "sk-live" not in text and (path.stat().st_mode & 0o777) == 0o600
    assert holds_secret("api_key = x") and holds_secret("PETSTORE_API_KEY=1") and not holds_secret("/list sold")


def test_ctrl_c_and_ctrl_d_at_the_prompt(client: PetStoreClient, pipe: PipeInput) -> None:
    edit = editor(CommandSession(client, registry=REGISTRY, env=ENV), pipe)
    with pytest.raises(KeyboardInterrupt):
        typed(edit, pipe, "/list", CTRL_C)
    with pytest.raises(EOFError):
        typed(edit, pipe, CTRL_D)


async def test_toolbar_shows_where_and_the_last_outcome(client: PetStoreClient) -> None:
    session = CommandSession(client, registry=REGISTRY, env=ENV)
    edit = PromptEditor(session, history_path=None, output=DummyOutput())

    def bar() -> str:
        return "".join(text for _, text in edit.toolbar())

    assert "sandbox" in bar() and "sk-...abcd" in bar() and "Ctrl-R" in bar()
    await session.run("/list sold")
    assert "✓ 4 pets with status sold" in bar()
    await session.run("/get 999999")
    assert "✗ error: no pet with id '999999'" in bar()
    await client.aclose()


def test_lexer_marks_what_cannot_run() -> None:
    lexer = CommandLexer(REGISTRY)
    assert lexer.tokens('/list --status sold "Rex"') == [
        ("class:command", "/list"),
        ("", " "),
        ("class:flag", "--status"),
        ("", " "),
        ("", "sold"),
        ("", " "),
        ("class:string", '"Rex"'),
    ]
    assert [s for s, _ in lexer.tokens('/lsit --bogus "open')] == ["class:error", "", "", "", "class:error"]
    assert lexer.tokens("/list --nope")[-1] == ("class:error", "--nope")


# -- the real entry point on a pseudo-terminal --------------------------------------------------------


class Terminal:
    """``petstore chat`` on a pty with TERM=xterm: send keys, wait for text (bounded, no sleeps)."""

    def __init__(self, home: Path, *args: str) -> None:
        import fcntl
        import os
        import struct
        import subprocess
        import sys
        import termios

        env = {k: v for k, v in os.environ.items() if not k.startswith("PETSTORE_")}
        env.update(TERM="xterm", XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "config"))
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))  # 100 x 30
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "petstore_cli", *args, "chat"],
            cwd=Path(__file__).parents[2],
            env=env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            close_fds=True,
        )
        os.close(slave)
        self.seen = ""

    def expect(self, text: str) -> None:
        import os
        import select
        import time

        deadline = time.monotonic() + 30
        while text not in self.seen:
            ready, _, _ = select.select([self.master], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"no {text!r} on the terminal: {self.seen[-400:]!r}"
            chunk = os.read(self.master, 65536)
            assert chunk, f"the chat ended before {text!r}"
            if b"\x1b[6n" in chunk:  # a cursor position request, as a terminal answers it (the toolbar needs it)
                os.write(self.master, b"\x1b[1;1R")
            self.seen += chunk.decode("utf-8", "replace")
        self.seen = self.seen[self.seen.index(text) + len(text) :]

    def send(self, keys: str) -> None:
        import os

        os.write(self.master, keys.encode())

    def close(self) -> int:
        """Wait for the chat to end, reading what it still writes (a full pty would block its exit)."""
        import os
        import select
        import time

        deadline = time.monotonic() + 30
        try:
            while self.proc.poll() is None and time.monotonic() < deadline:
                ready, _, _ = select.select([self.master], [], [], 0.05)
                if ready:
                    try:
                        os.read(self.master, 65536)
                    except OSError:  # the chat closed its side
                        break
            return self.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        finally:
            os.close(self.master)


def test_chat_on_a_terminal_runs_on_prompt_toolkit(tmp_path: Path) -> None:
    term = Terminal(tmp_path)
    try:
        term.expect("Ctrl-D quits")  # the greeting
        term.expect("Tab completes · → takes a suggestion")  # the toolbar: the prompt is up (raw mode)
        term.send("/list sold")
        term.send(ENTER)
        term.expect("Goldie")
        term.expect("4 pets with status sold")  # the toolbar's last outcome: the next prompt is up
        term.send("/orders" + CTRL_C)  # Ctrl-C at the prompt drops the line, the chat goes on
        term.send("/env" + ENTER)
        term.expect("API key")  # the next line ran: the chat went on
        term.expect("✓ env sandbox")  # the toolbar's last outcome: the prompt after it is up, Ctrl-D ends it
        term.send(CTRL_D)
    finally:
        code = term.close()
    assert code == 0
    history = (tmp_path / "data" / "petstore" / "history").read_text()
    assert "+/list sold" in history and "/orders" not in history


def test_a_line_typed_before_the_session_is_ready_runs_when_it_is(tmp_path: Path) -> None:
    term = Terminal(tmp_path)
    try:
        term.expect("Ctrl-D quits")
        term.send("/list pending" + ENTER)  # at once: the session may still be being built
        term.expect("Tweety")
        term.expect("3 pets with status pending")
        term.send(CTRL_D)
    finally:
        code = term.close()
    assert code == 0


def test_a_bad_setting_ends_the_terminal_chat_with_one_line(tmp_path: Path) -> None:
    term = Terminal(tmp_path, "--env", "production")
    try:
        term.expect("PETSTORE_PRODUCTION__BASE_URL")
    finally:
        code = term.close()
    assert code == 2 and "Traceback" not in term.seen


def test_a_history_file_open_to_others_is_tightened_with_one_line(tmp_path: Path) -> None:
    history = tmp_path / "data" / "petstore" / "history"
    history.parent.mkdir(parents=True)
    history.write_text("\n# 2026-01-01 00:00:00\n+/list sold\n")
    history.chmod(0o644)
    term = Terminal(tmp_path)
    try:
        term.expect(f"petstore: warning: tightened {history} to 0600 (it was 0644)")
        term.expect("Tab completes")  # the prompt came up after it
        term.send("/list pending" + ENTER)
        term.expect("3 pets with status pending")  # the toolbar's last outcome: the next prompt is up
        term.send(CTRL_D)
    finally:
        code = term.close()
    assert code == 0 and history.stat().st_mode & 0o777 == 0o600
    assert history.read_text().endswith("\n+/list pending\n") and "+/list sold" in history.read_text()
