"""The TUI under every fault of the fault server, hostile error bodies, and the canary key.

Style of tests/tui: a real ``CommandSession`` driven through ``PetStoreApp``
with Textual's Pilot (``app.run_test``); here the session's client talks to
the loopback fault server (or a proxy in front of the real service). For each
fault: the app keeps running, the pets pane shows a problem banner naming the
cause (or the list, when it is not a fault), a failed add leaves no row and
nothing recorded, the app answers keys while a request hangs, and the canary
key is in no screenshot, log line or notification.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from faultserver import FAULTS, FaultServer, refused_url
from pilot_support import settle
from textual.content import Content
from textual.markup import MarkupError
from textual.widgets import Input, RichLog, Static

from bot_commands.commands import default_registry
from bot_commands.results import EnvInfo
from bot_commands.session import CommandSession
from petstore_api import PetStoreClient, RetryPolicy, Timeouts
from tui.app import PetStoreApp
from tui.screens.add_pet import AddPetScreen
from tui.screens.help import HelpScreen

from .faults_table import ADD_SUCCEEDS, EXPECT, SLOW
from .proxy import Proxy
from .support import CANARY, MASKED, assert_no_secret, assert_terminal_safe, named

REGISTRY = default_registry()

pytestmark = pytest.mark.slow
SIZE = (110, 32)


async def _no_sleep(_seconds: float) -> None:
    return None


def _session(url: str, *, total: float = 1.0) -> CommandSession:
    client = PetStoreClient(
        base_url=url,
        api_key=CANARY,
        timeouts=Timeouts(read=5.0, total=total),
        retry=RetryPolicy(backoff=0.01, retry_after_cap=1.0),
    )
    return CommandSession(
        client, registry=REGISTRY, env=EnvInfo(env="custom", base_url=url, masked_key=MASKED), sleep=_no_sleep
    )


class Watched:
    """An app, and every notification it showed."""

    def __init__(self, session: CommandSession) -> None:
        self.app = PetStoreApp(session)
        self.notes: list[str] = []
        self.toasts: list[Content] = []  # what each notification shows, as its Toast renders it
        notify = self.app.notify

        def record(message: str, **kwargs: Any) -> None:
            self.notes.append(str(message))
            markup = kwargs.get("markup", True)
            try:
                self.toasts.append(Content.from_markup(message) if markup else Content(message))
            except MarkupError as exc:  # the Toast would raise this while rendering: the app would end
                self.toasts.append(Content(f"MarkupError: {exc}"))
            notify(message, **kwargs)

        self.app.notify = record  # type: ignore[method-assign]

    def log(self) -> str:
        return "\n".join(strip.text for strip in self.app.main_screen.query_one(RichLog).lines)

    def toasts_shown(self) -> list[object]:
        return list(self.app.screen.query("Toast"))

    def banner(self) -> str:
        return str(self.app.main_screen.query_one("#pets-banner", Static).render())

    def everything(self) -> str:
        return "\n".join([self.app.export_screenshot(), self.log(), *self.notes])


@contextlib.asynccontextmanager
async def watched(url: str, *, total: float = 1.0) -> AsyncIterator[Watched]:
    session = _session(url, total=total)
    async with session.client:
        yield Watched(session)


async def _add(pilot: Any, name: str) -> AddPetScreen:
    await pilot.press("a")
    form = pilot.app.screen
    assert isinstance(form, AddPetScreen)
    form.query_one("#name", Input).value = name
    form.query_one("#category", Input).value = "3"
    await pilot.press("ctrl+s")
    await settle(pilot)
    return form


def _no_phantom(app: PetStoreApp, listed: set[int]) -> None:
    session = app.session
    assert set(app.main_screen.pane.pets) == listed  # no row for the failed add
    assert session.last_pet_id is None and set(session.seen_ids) == listed  # nothing recorded as created


@pytest.mark.parametrize("fault", FAULTS)
async def test_tui_under_fault(faults: FaultServer, fault: str) -> None:
    expect = EXPECT[fault]
    # A hanging request must still be on its way when the test presses a key, and a 502's retries with their backoff
    # must end within the limit: 3 s leaves room for both on a loaded machine (1 s did not, with both cores busy).
    total = 3.0
    async with watched(refused_url() if fault == "refuse" else faults.url(fault), total=total) as w:
        app = w.app
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            app.main_screen.submit("/add Ghost --category 3")  # while the first list is on its way
            if fault in SLOW:  # both still waiting: the app answers keys meanwhile
                await pilot.press("question_mark")
                await pilot.pause()
                assert isinstance(app.screen, HelpScreen) and app.main_screen.pane.table.loading
                await pilot.press("escape")
            await settle(pilot)
            assert app.is_running and app.screen is app.main_screen
            pane = app.main_screen.pane
            assert not pane.table.loading
            if expect.error is None:
                assert not pane.has_class("-problem") and 1 in pane.pets
                assert ("adopted" in app.export_screenshot()) is (fault == "unknown_status_and_extra")
            else:
                assert pane.has_class("-problem") and "Press r to retry" in w.banner()
                assert re.search(expect.cause, w.banner()), w.banner()
                assert re.search(expect.cause, w.log()), w.log()  # the list's failure: banner and log
                assert len(w.toasts_shown()) <= 1  # errors in a burst: one toast, the newest
            if fault in ADD_SUCCEEDS:
                assert app.session.last_pet_id == 42 and 42 in pane.pets
            else:
                _no_phantom(app, {1} if expect.error is None else set())
            assert_no_secret(w.everything())


@pytest.fixture
def proxy(service: tuple[str, object]) -> Iterator[Proxy]:
    """The real service behind a proxy that fails the adds it is told to."""
    with Proxy(service[0]) as p:
        yield p


async def _failed_add_in_the_form(proxy: Proxy, name: str, *, toasts: bool = True) -> tuple[Watched, str]:
    """Open the form, add ``name`` (the proxy fails it), check no row came; (app, the form's error line)."""
    async with watched(proxy.url()) as w:
        app = w.app
        async with app.run_test(size=SIZE, notifications=toasts) as pilot:
            await settle(pilot)
            listed = set(app.main_screen.pane.pets)
            form = await _add(pilot, name)
            assert app.screen is form and form.has_class("-failed")  # the form stays, fields kept
            assert form.query_one("#name", Input).value == name
            error = str(form.query_one("#form-error", Static).render())
            assert error and "\n" not in error
            _no_phantom(app, listed)
            await pilot.press("escape")
            app.main_screen.submit("/env")
            await settle(pilot)
            assert app.is_running and f"key {MASKED}" in w.log()
            assert_terminal_safe(w.log())
            assert_no_secret(w.everything())
    return w, error


async def test_tui_dropped_add_leaves_no_row(proxy: Proxy, service: tuple[str, object]) -> None:
    proxy.plan = ["drop_before"] * 3
    _, error = await _failed_add_in_the_form(proxy, "Dropped")
    assert "broke off" in error
    assert await named(service[0], "Dropped") == []


async def test_tui_hostile_500_is_literal_in_the_form_and_leaves_no_row(proxy: Proxy, service) -> None:
    proxy.plan = ["error_500"]
    proxy.error_body = {"code": "\x1b[31mboom", "message": "[b]x[/b]\x1b]52;c;Zm9v\x07\n\u202eline two", "status": 500}
    _, error = await _failed_add_in_the_form(proxy, "Hostile")
    assert "[b]x[/b]" in error and "␛]52;c;Zm9v␇" in error and "<U+202E>" in error and "\x1b" not in error
    assert await named(service[0], "Hostile") == []


async def test_tui_error_toast_shows_service_text_literally(proxy: Proxy) -> None:
    proxy.plan = ["error_500"]
    proxy.error_body = {
        "code": "c",
        "status": 500,
        "message": "[b]x[/b] \x1b[31mred \u202eevil [@click=app.quit]click[/] stray [/]",
    }
    w, _ = await _failed_add_in_the_form(proxy, "Toast", toasts=False)  # toasts judged as they would render
    shown = [toast.plain for toast in w.toasts]
    assert shown and not [text for text in shown if text.startswith("MarkupError")]  # would end the app
    assert all("[b]x[/b]" in text and "[@click=app.quit]" in text for text in shown)
    assert not [span for toast in w.toasts for span in toast.spans if "click" in str(span.style)]
    for text in shown:
        assert_terminal_safe(text)
