"""Failures: 401, unreachable service, bugs; hostile data; production confirmation."""

from __future__ import annotations

import io

from rich.console import Console
from textual.widgets import Input, Static
from tui_support import settle, wait_for_screen

from petstore_api.masking import mask_secret
from tui.confirm import TuiConfirm
from tui.render import NAME_CELL_WIDTH
from tui.screens.add_pet import AddPetScreen
from tui.screens.api_key import ApiKeyScreen
from tui.screens.confirm import ConfirmScreen
from tui.screens.detail import fields_table
from tui.widgets.env_bar import EnvBar


def banner(app) -> str:
    return str(app.main_screen.query_one("#pets-banner", Static).render())


async def test_unreachable_service_is_a_state_with_retry(harness) -> None:
    session = harness.session()
    harness.tap.down = True
    app = harness.app(session)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        pane = app.main_screen.pane
        assert pane.has_class("-problem") and "Press r to retry" in banner(app)
        assert not pane.table.loading and app.is_running
        await pilot.press("2", "o", "enter")  # more failures: still running
        await settle(pilot)
        harness.tap.down = False
        await pilot.press("r")
        await settle(pilot)
        assert not pane.has_class("-problem") and len(pane.pets) == 5


async def test_401_asks_for_a_key(harness) -> None:
    app = harness.app(harness.session(api_key="sk-wrong-key-000000"))
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ApiKeyScreen)
        assert "Not authorised" in banner(app)
        app.screen.query_one(Input).value = harness.sandbox.api_key
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is app.main_screen and app.is_running
        assert len(app.main_screen.pane.pets) == 12  # the key was swapped and the list retried
        assert app.session.env.masked_key == mask_secret(harness.sandbox.api_key)


async def test_an_unexpected_exception_never_ends_the_app(harness) -> None:
    session = harness.session()

    async def broken(**kwargs: object):
        raise RuntimeError("bug in the command layer")

    session.client.create_pet = broken  # a handler ending in an exception nobody planned for
    app = harness.app(session)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        await pilot.press("r", "a")
        await pilot.pause()
        app.screen.query_one("#name", Input).value = "x"
        app.screen.query_one("#category", Input).value = "1"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.is_running and isinstance(app.screen, AddPetScreen)
        assert "bug in the command layer" in str(app.screen.query_one("#form-error").render())


async def test_hostile_names_are_shown_literally_and_hold_the_layout(harness) -> None:
    store = harness.sandbox.store
    hostile = ["[b]x[/b]", "evil\x1b[31mred\x1b]0;title\x07", "\u202eevil", "n" * 10_000, "🐶‍🦺 e\u0301"]
    for name in hostile:
        store.create_pet(name=name, category_id=1, status="available")
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        table = app.main_screen.pane.table
        names = [table.get_row(str(i))[1].plain for i in range(13, 18)]
        assert names[0] == "[b]x[/b]"
        assert "\x1b" not in names[1] and "␛[31mred" in names[1]
        assert names[2] == "<U+202E>evil"
        assert len(names[3]) == NAME_CELL_WIDTH  # kept long; the table cuts it to its column
        row = table.render_line(1 + table.get_row_index("16")).text
        assert len(row) == table.size.width and row.rstrip().split()[1].endswith("…")
        assert "\x1b" not in app.export_screenshot()
        await app.main_screen.run_line("/get 16")
        await settle(pilot)
        console = Console(width=90, record=True, file=io.StringIO())
        console.print(fields_table(app.screen.view.fields))
        assert "(10000 characters)" in console.export_text()


async def test_production_is_marked_and_adds_ask_first(harness) -> None:
    confirm = TuiConfirm()
    session = harness.session(env="production", confirm=confirm)
    app = harness.app(session, confirm=confirm)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        assert app.main_screen.query_one(EnvBar).has_class("-env-production")
        await pilot.press("a")
        form = app.screen
        form.query_one("#name", Input).value = "Prod pet"
        form.query_one("#category", Input).value = "1"
        await pilot.press("ctrl+s")
        question = await wait_for_screen(pilot, ConfirmScreen)
        assert "PRODUCTION" in question.question
        await pilot.press("n")
        await settle(pilot)
        assert app.screen is form and "declined" in str(form.query_one("#form-error").render())
        await pilot.press("ctrl+s")
        await wait_for_screen(pilot, ConfirmScreen)
        await pilot.press("y")
        await settle(pilot)
        assert app.screen is app.main_screen and app.main_screen.pane.selected_pet_id() == 13


async def test_read_only_refuses_adds_in_the_form(harness) -> None:
    app = harness.app(harness.session(read_only=True))
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        await pilot.press("a")
        form = app.screen
        form.query_one("#name", Input).value = "Nope"
        form.query_one("#category", Input).value = "1"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "read-only" in str(form.query_one("#form-error").render())
        assert 13 not in app.main_screen.pane.pets
