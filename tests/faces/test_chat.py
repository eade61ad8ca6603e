"""``petstore chat``, function-level: piped input, one-line errors, Ctrl-C (the prompt itself: test_prompt.py)."""

from __future__ import annotations

import asyncio
import io
import os
import signal
from collections.abc import Iterator
from typing import Any

import pytest
from rich.console import Console

from bot_commands.commands import default_registry
from bot_commands.results import EnvInfo
from bot_commands.session import CommandSession
from petstore_api.client import PetStoreClient
from petstore_cli import chat
from petstore_cli.chat import ChatLoop, run_chat

REGISTRY = default_registry()

BASE = "http://sandbox.localhost/v1"
ENV = EnvInfo(env="sandbox", base_url=BASE, masked_key="sk-...abcd", sandbox=True)


@pytest.fixture
def client(sandbox: Any, transport: Any) -> PetStoreClient:
    return PetStoreClient(base_url=BASE, api_key=sandbox.api_key, transport=transport, allow_insecure_http=True)


def chat_with(session: CommandSession, text: str, *, aclose: Any = None) -> tuple[int, str]:
    out = io.StringIO()
    code = run_chat(session, console=Console(file=out, width=100), stdin=io.StringIO(text), aclose=aclose)
    return code, out.getvalue()


def test_piped_lines_run_without_prompt_decoration(client: PetStoreClient) -> None:
    session = CommandSession(client, registry=REGISTRY, env=ENV)
    text = "# comment\n\n/list sold\nget 3\n/lst\n/list --limit abc\n/get 999\n/env\n"
    code, out = chat_with(session, text, aclose=client.aclose)
    assert code == 0
    assert "sandbox>" not in out and "petstore chat" not in out and "\x1b" not in out
    assert "Goldie" in out and "Pet 3" in out and "note: getPet is deprecated" in out
    lines = out.splitlines()
    assert "unknown command /lst; did you mean /list? /help lists the commands" in lines
    assert any(line.startswith("limit must be a whole number from 1 to 100, not 'abc'. Usage: /list") for line in lines)
    assert "error: no pet with id '999' (HTTP 404, not_found)" in lines
    assert "environment" in out and "Traceback" not in out
    assert session.history == ["/list sold", "get 3", "/get 999", "/env"]


def test_quit_stops_reading(client: PetStoreClient) -> None:
    session = CommandSession(client, registry=REGISTRY, env=ENV)
    code, out = chat_with(session, "/env\n/quit\n/list\n", aclose=client.aclose)
    assert code == 0 and session.history == ["/env"] and "Rex" not in out


def test_help_and_whoami_offer_only_what_works_in_the_terminal(client: PetStoreClient) -> None:
    session = CommandSession(client, registry=REGISTRY, env=ENV)
    code, out = chat_with(session, "/help\n/whoami\n/watch\n", aclose=client.aclose)
    offered, refused = out.split("/watch works in chat rooms only")
    assert code == 0 and "/list" in offered and "/quit" in offered
    for chat_only in ("/watch", "/unwatch", "/every", "/schedules", "/unschedule", "/audit"):
        assert chat_only not in offered, chat_only
    assert "petstore bot matrix" in refused


class SlowClient:
    """list_orders interrupts itself with SIGINT (like Ctrl-C) and then hangs."""

    def __init__(self) -> None:
        self.cancelled = False

    async def list_orders(self) -> Any:
        os.kill(os.getpid(), signal.SIGINT)
        try:
            await asyncio.wait_for(asyncio.Event().wait(), timeout=60)  # a failure, not a hang, if nothing cancels
        except asyncio.CancelledError:
            self.cancelled = True
            raise


@pytest.mark.skipif(os.name != "posix", reason="SIGINT delivery")
def test_ctrl_c_cancels_the_running_command_not_the_session() -> None:
    # As at a terminal: a process started in the background by a shell without job control inherits SIGINT
    # ignored, and asyncio's runner then leaves Ctrl-C alone.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        _ctrl_c_cancels()
    finally:
        signal.signal(signal.SIGINT, previous)


def _ctrl_c_cancels() -> None:
    slow = SlowClient()
    session = CommandSession(slow, registry=REGISTRY, env=ENV)
    code, out = chat_with(session, "/orders\n/help env\n")
    assert code == 0 and slow.cancelled
    assert out.splitlines()[0] == "cancelled" and "/env" in out


def reader(*items: str | type[BaseException]) -> Any:
    queue = list(items)

    def read(prompt: str) -> str:
        item = queue.pop(0)
        if isinstance(item, type):
            raise item()
        return item

    return read


def test_interactive_ctrl_c_at_the_prompt_clears_the_line_and_ctrl_d_exits(client: PetStoreClient) -> None:
    out = io.StringIO()
    session = CommandSession(client, registry=REGISTRY, env=ENV)
    with asyncio.Runner() as runner:
        loop = ChatLoop(
            session,
            console=Console(file=out, width=100),
            runner=runner,
            read=reader(KeyboardInterrupt, "/env", EOFError),
            interactive=True,
        )
        assert loop.prompt == "sandbox> "
        assert loop.run() == 0
        runner.run(client.aclose())
    text = out.getvalue()
    assert text.startswith("petstore chat on sandbox") and "environment" in text


@pytest.fixture
def answers(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    queue: list[Any] = []

    def fake_input(prompt: str = "") -> str:
        item = queue.pop(0)
        if isinstance(item, type):
            raise item()
        return item

    monkeypatch.setattr("builtins.input", fake_input)
    yield queue


async def test_confirmation_prompt(answers: list[Any]) -> None:
    confirm = chat._make_confirm(Console(file=io.StringIO()))
    answers += ["y", "", "no", EOFError, KeyboardInterrupt, "YES"]
    assert [await confirm("add pet?") for _ in range(6)] == [True, False, False, False, False, True]
