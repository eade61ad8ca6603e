"""Pilot tests of the main flows against the sandbox service."""

from __future__ import annotations

import asyncio

from textual.widgets import Input, RichLog, Select
from tui_support import error_body, settle

from tui.screens.add_pet import AddPetScreen
from tui.screens.detail import DetailScreen
from tui.screens.help import HelpScreen
from tui.screens.orders import OrdersScreen
from tui.widgets.footer import KeysFooter
from tui.widgets.status_tabs import SPANS, tab_at


def log_text(app) -> str:
    log = app.main_screen.query_one(RichLog)
    return "\n".join(strip.text for strip in log.lines)


def shown_ids(app) -> list[int]:
    return list(app.main_screen.pane.pets)


async def test_startup_lists_every_pet_and_echoes_the_command(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        assert shown_ids(app) == list(range(1, 13))
        assert "› /list --limit 20" in log_text(app)
        assert app.session.history == ["/list --limit 20"]
        assert app.focused is app.main_screen.pane.table


async def test_tabs_filter_by_status_with_keys_and_mouse(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        pane = app.main_screen.pane
        assert pane.status == "sold" and app.main_screen.tabs.active == "sold"
        assert {p.status_text for p in pane.pets.values()} == {"sold"}
        assert app.session.history[-1] == "/list sold --limit 20"
        await pilot.click("#status-tabs", offset=(SPANS["pending"][0] + 2, 0))  # on the label "3 Pending"
        await settle(pilot)
        assert {p.status_text for p in pane.pets.values()} == {"pending"}
        await pilot.click("#status-tabs", offset=(SPANS["sold"][1] + 3, 1))  # right of every tab: nothing
        await settle(pilot)
        assert app.main_screen.tabs.active == "pending"
        await pilot.press("1")
        await settle(pilot)
        assert len(pane.pets) == 12 and pane.status is None


async def test_the_tab_under_the_pointer_is_lit_and_the_labels_are_where_clicks_land(harness) -> None:
    # " 1 All  2 Available  3 Pending  4 Sold ": each label with a column of padding either side
    assert [tab_at(column) for column in (0, 6, 7, 19, 20, 30, 31, 38, 39, 80)] == [
        "all",
        "all",
        "available",
        "available",
        "pending",
        "pending",
        "sold",
        "sold",
        None,
        None,
    ]
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        tabs = app.main_screen.tabs
        await pilot.hover("#status-tabs", offset=(SPANS["sold"][0] + 1, 0))
        await pilot.pause()
        assert tabs.hovered == "sold" and tabs.active == "all"
        labels = tabs.render().renderables[0]
        lit = {labels.plain[span.start : span.end].strip(): span.style for span in labels.spans}
        assert lit["4 Sold"] == lit["1 All"] != lit["2 Available"] == lit["3 Pending"]  # hovered as the active one
        await pilot.hover("#pets-table")
        await pilot.pause()
        assert tabs.hovered is None


async def test_a_slow_answer_for_an_old_tab_never_overwrites_a_newer_one(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        gate = asyncio.Event()
        harness.tap.gates["status=available"] = gate
        await pilot.press("2")  # slow: held at the gate
        await pilot.pause()
        assert app.main_screen.pane.table.loading
        await pilot.press("4")  # fast
        await settle(pilot)
        gate.set()
        await settle(pilot)
        pane = app.main_screen.pane
        assert pane.status == "sold" and {p.status_text for p in pane.pets.values()} == {"sold"}
        assert app.main_screen.tabs.active == "sold"


async def test_stale_list_results_are_dropped_even_when_both_complete(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        screen = app.main_screen
        gate = asyncio.Event()
        harness.tap.gates["status=pending"] = gate
        old = asyncio.ensure_future(screen.run_line("/list pending"))
        await pilot.pause()
        await screen.run_line("/list sold")
        gate.set()
        await old
        await settle(pilot)
        assert {p.status_text for p in screen.pane.pets.values()} == {"sold"}


async def test_page_size_keys_and_load_more(harness) -> None:
    app = harness.app(page_size=5)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        pane = app.main_screen.pane
        pane.page_size_delay = 0  # no wait for more presses
        assert shown_ids(app) == [1, 2, 3, 4, 5] and pane.next_url
        await pilot.press("n")
        await settle(pilot)
        assert shown_ids(app) == list(range(1, 11))
        assert app.session.history[-1] == "/more"  # load more is a command too, so /history save replays it
        await pilot.press(*["down"] * 9)  # reaching the end loads the rest
        await settle(pilot)
        assert shown_ids(app) == list(range(1, 13)) and pane.next_url is None
        await pilot.press("+")
        await settle(pilot)
        assert pane.page_size == 10 and app.session.history[-1] == "/list --limit 10"
        assert shown_ids(app) == list(range(1, 11))
        await pilot.press("-", "-")
        await settle(pilot)
        assert pane.page_size == 1 and shown_ids(app)[:1] == [1]


async def test_load_more_keeps_the_rows_readable_while_the_page_comes(harness) -> None:
    app = harness.app(page_size=5)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        pane = app.main_screen.pane
        info = pane.query_one("#pets-info")
        gate = asyncio.Event()
        harness.tap.gates["cursor="] = gate  # the next page is held back
        await pilot.press("n")
        await pilot.pause()
        assert not pane.table.loading and shown_ids(app) == [1, 2, 3, 4, 5]
        assert "loading more…" in str(info.render())
        gate.set()
        await settle(pilot)
        assert shown_ids(app) == list(range(1, 11)) and "more: n" in str(info.render())


async def test_a_failed_load_more_restores_the_info_line(harness) -> None:
    app = harness.app(page_size=5)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        pane = app.main_screen.pane
        harness.tap.down = True
        await pilot.press("n")
        await settle(pilot)
        info = str(pane.query_one("#pets-info").render())
        assert "loading" not in info and "5 pets shown" in info and shown_ids(app) == [1, 2, 3, 4, 5]
        assert pane.has_class("-problem") and not pane.table.loading


async def test_refresh_shows_new_data(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        harness.sandbox.store.create_pet(name="Newcomer", category_id=9, status="available")
        await pilot.press("r")
        await settle(pilot)
        assert 13 in shown_ids(app)
        assert app.session.history[-1] == "/list --limit 20"


async def test_add_form_validates_as_you_type_then_adds_and_selects(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, AddPetScreen)
        await pilot.press("R", "e", "x", "tab")
        await pilot.press("x")
        await pilot.pause()
        assert "whole number" in str(form.query_one("#category-error").render())
        await pilot.press("enter")  # refused locally: nothing sent
        await pilot.pause()
        assert app.screen is form and len(app.session.history) == 1
        form.query_one("#category", Input).value = "7"
        form.query_one("#status", Select).value = "available"
        await pilot.pause()
        assert str(form.query_one("#category-error").render()) == ""
        await pilot.click("#add")
        await settle(pilot)
        assert app.screen is app.main_screen
        assert app.session.history[-1] == "/add Rex --category 7 --status available"
        pane = app.main_screen.pane
        assert pane.selected_pet_id() == 13 and pane.pets[13].name == "Rex"
        assert app.focused is pane.table


async def test_add_form_shows_the_services_400_and_keeps_its_contents(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        harness.tap.replies[("POST", "/v1/pets")] = (400, error_body(400, "bad_request", "name is taken"))
        await pilot.press("a")
        form = app.screen
        form.query_one("#name", Input).value = "Rex"
        form.query_one("#category", Input).value = "2"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.screen is form and form.has_class("-failed")
        assert "name is taken" in str(form.query_one("#form-error").render())
        assert form.query_one("#name", Input).value == "Rex"
        assert 13 not in app.main_screen.pane.pets  # no phantom row
        await pilot.press("escape")
        assert app.screen is app.main_screen


async def test_add_of_another_status_switches_tab_and_selects(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        await app.main_screen.run_line("/add Pip --category 3 --status pending")
        await settle(pilot)
        pane = app.main_screen.pane
        assert pane.status == "pending" and app.main_screen.tabs.active == "pending"
        assert pane.selected_pet_id() == 13


async def test_enter_on_a_row_opens_the_detail_with_the_deprecation_note(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        await pilot.press("down", "down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, DetailScreen)
        view = app.screen.view
        assert view.pet_id == 3 and ("name", "Tweety") in view.fields and not view.failure
        assert "5 December 2030" in view.notice
        assert app.session.history[-1] == "/get 3"
        await pilot.press("escape")
        assert app.screen is app.main_screen


async def test_clicking_a_row_twice_opens_its_detail(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        await pilot.click("#pets-table", offset=(12, 4))
        await settle(pilot)
        assert app.main_screen.pane.selected_pet_id() == 4
        await pilot.click("#pets-table", offset=(12, 4))
        await settle(pilot)
        assert isinstance(app.screen, DetailScreen) and app.screen.view.pet_id == 4


async def test_get_of_a_missing_pet_is_a_clear_404(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        await app.main_screen.run_line("/get 999")
        await settle(pilot)
        assert isinstance(app.screen, DetailScreen)
        assert app.screen.view.failure.kind == "not_found"
        assert "No pet with id 999" in str(app.screen.query_one("#detail-error").render())


async def test_detail_falls_back_to_list_data_when_getpet_is_gone(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        harness.tap.replies[("GET", "/v1/pets/")] = (410, error_body(410, "gone", "getPet was removed"))
        await app.main_screen.run_line("/get 4")
        await settle(pilot)
        view = app.screen.view
        assert isinstance(app.screen, DetailScreen) and not view.failure
        assert ("name", "Goldie") in view.fields and "410" in view.fallback


async def test_detail_after_the_sunset_uses_the_list_without_asking(harness) -> None:
    from datetime import date

    app = harness.app(today=lambda: date(2031, 1, 1))
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, DetailScreen)
        assert ("name", "Rex") in app.screen.view.fields and "removed" in app.screen.view.fallback
        assert not any(line.startswith("/get") for line in app.session.history)


async def test_orders_view_renders_a_table_for_flat_records(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        harness.tap.replies[("GET", "/v1/store/orders")] = (200, [{"id": 1, "petId": 3, "note": "[b]x[/b]"}])
        await pilot.press("o")
        await settle(pilot)
        assert isinstance(app.screen, OrdersScreen)
        table = app.screen.query_one("#orders-table")
        assert table.row_count == 1 and table.get_row_at(0)[2].plain == "[b]x[/b]"
        await pilot.press("escape")
        harness.tap.replies[("GET", "/v1/store/orders")] = (200, {"orders": [{"id": 1, "items": [1, 2]}]})
        await pilot.press("o")
        await settle(pilot)
        assert app.screen.query_one("#orders-json")
        await pilot.press("escape")
        await pilot.press("o")  # the sandbox's real answer: an empty list
        harness.tap.replies.clear()
        await settle(pilot)


async def test_prompt_commands_drive_the_panes(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        prompt = app.main_screen.chat.prompt
        assert app.focused is prompt and prompt.value == "/"
        await pilot.press(*"list sold", "enter")
        await settle(pilot)
        assert app.main_screen.tabs.active == "sold"
        await pilot.press(*"4")  # the prompt has focus: "4" is typed, not a tab switch
        assert prompt.value == "4" and app.main_screen.tabs.active == "sold"
        prompt.value = '/add "Bo Peep" --category 2 --status sold'
        await pilot.press("enter")
        await settle(pilot)
        assert app.main_screen.pane.selected_pet_id() == 13
        prompt.value = "/get 3"
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, DetailScreen) and app.screen.view.pet_id == 3
        await pilot.press("escape")
        await pilot.press("escape")  # leaves the prompt for the list
        assert app.focused is app.main_screen.pane.table
        assert "Bo Peep" in log_text(app)


async def test_prompt_completion_and_history(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        await pilot.press("slash", "l", "i")
        await settle(pilot)
        await pilot.press("tab")
        prompt = app.main_screen.chat.prompt
        assert prompt.value == "/list "  # a finished word ends with a space, as in the chat
        await pilot.press("s", "o")
        await settle(pilot)
        await pilot.press("tab")
        assert prompt.value == "/list sold "
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("slash", "up")
        assert prompt.value == "/list sold"  # typed lines come back (the ones keys ran are not typed)


async def test_usage_errors_are_shown_and_nothing_breaks(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        await app.main_screen.run_line("/lsit")
        await app.main_screen.run_line("/list --limit 500")
        await settle(pilot)
        text = log_text(app)
        assert "did you mean /list" in text and "limit must be" in text
        assert not app.main_screen.pane.table.loading
        assert len(app.main_screen.pane.pets) == 12


async def test_command_palette_offers_the_registry_commands(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"orders")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, OrdersScreen)
        assert app.session.history[-1] == "/orders"
        await pilot.press("escape")
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"/get")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert app.main_screen.chat.prompt.value == "/get "


async def test_help_screen_lists_the_bindings(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        keys = {(key, what) for _, key, what in app.screen.rows}
        for key in ["/", "a", "r", "1", "n", "esc", "ctrl+q"]:
            assert any(k == key or k.startswith(key + " ") for k, _ in keys), key
        await pilot.press("escape")
        assert app.screen is app.main_screen


async def test_themes_switch(harness) -> None:
    app = harness.app(theme="nord")
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        assert app.theme == "nord"
        app.theme = "textual-light"
        await pilot.pause()
        assert len(app.main_screen.pane.pets) == 12


async def test_ctrl_q_quits(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+q")
    assert app.return_code == 0


async def test_the_keys_footer_is_rebuilt_only_when_its_keys_change(harness) -> None:
    """The same keys signalled again leave the footer's widgets as they are; other keys rebuild it."""
    app = harness.app()
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        footer = app.main_screen.query_one(KeysFooter)
        keys = list(footer.children)
        assert keys and "Quit" in {binding[1] for binding in footer.shown_keys()}
        app.main_screen.refresh_bindings()
        await settle(pilot)
        assert list(footer.children) == keys  # the same widgets: not recomposed
        shown = footer.shown_keys()
        await pilot.press("tab")  # from the table to the prompt: other keys
        await settle(pilot)
        assert footer.shown_keys() != shown
        assert list(footer.children) and not set(footer.children) & set(keys)
