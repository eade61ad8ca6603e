"""Issue 16: the TUI at any size and in daily use. One test per defect found by a new user;
each fails on the code before the fix."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from textual.widgets import Input, RichLog
from tui_support import error_body, make_client, no_sleep, settle, wait_for_screen

from bot_commands.commands import default_registry
from bot_commands.results import EnvInfo
from bot_commands.session import CommandSession
from petstore_api.masking import mask_secret
from petstore_server.sandbox import Sandbox
from tui.app import PetStoreApp
from tui.screens.add_pet import AddPetScreen
from tui.screens.api_key import ApiKeyScreen
from tui.widgets.env_bar import EnvBar
from tui.widgets.pets_table import PetsTable

BIG_ID, BIG_CATEGORY = 1234567890123456789, 987654321098765432


def seed(sandbox: Sandbox, *rows: tuple[int, str, int, str]) -> None:
    """Pets with chosen ids, as another server may hold them (int64 ids), straight into the store."""
    with sqlite3.connect(sandbox.db_path) as db:
        db.executemany("INSERT INTO pets (id, name, category_id, status) VALUES (?, ?, ?, ?)", rows)


def table(app: PetStoreApp) -> PetsTable:
    return app.main_screen.pane.table


def lines(app: PetStoreApp) -> list[str]:
    t = table(app)
    return [t.render_line(y).text for y in range(t.size.height)]


def log_lines(app: PetStoreApp) -> list[str]:
    return [strip.text.rstrip() for strip in app.main_screen.query_one(RichLog).lines]


def visible(app: PetStoreApp, selector: str) -> bool:
    """The widget is displayed and lies inside the screen."""
    widget = app.main_screen.query_one(selector)
    region, screen = widget.region, app.screen.region
    return widget.display and region.height > 0 and screen.contains_region(region)


# ------------------------------------------------------------------ the table


async def test_headers_sit_over_right_aligned_values(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        header, first, tenth = lines(app)[0], lines(app)[1], lines(app)[10]
        assert header.index("ID") + 2 == first.index("1 ") + 1 == tenth.index("10") + 2
        category_end = header.index("Category") + len("Category")
        assert first[category_end - 1] == "1" and first[category_end - 2] == " "


async def test_int64_ids_and_categories_show_in_full(harness) -> None:
    seed(harness.sandbox, (BIG_ID, "Largo", BIG_CATEGORY, "available"))
    app = harness.app()
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        row = lines(app)[13]
        assert str(BIG_ID) in row and str(BIG_CATEGORY) in row and "…" not in row
        assert table(app).column_width("id") == 19 and table(app).column_width("category") == 18


async def test_narrow_terminal_keeps_status_tabs_info_and_prompt(harness) -> None:
    seed(harness.sandbox, (BIG_ID, "Largo the Labrador", BIG_CATEGORY, "available"))
    app = harness.app()
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        assert lines(app)[0].split() == ["ID", "Name", "Status"]  # category gave way first
        assert all(len(line) <= 60 for line in lines(app))
        for selector in ("#status-tabs", "#pets-info", "#prompt", "#chat-log"):
            assert visible(app, selector), selector
        await pilot.resize_terminal(40, 20)
        await settle(pilot)
        assert lines(app)[0].split() == ["Name", "Status"]  # then the id


async def test_wide_terminal_widens_the_name(harness) -> None:
    long_name = "Sir Reginald Fluffington the Third of Barkshire, Esq."
    harness.sandbox.store.create_pet(name=long_name, category_id=1, status="sold")
    app = harness.app()
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        assert long_name in lines(app)[13] and table(app).column_width("name") > 150


async def test_the_log_shows_its_newest_line_after_a_resize(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        await app.main_screen.run_line("/help")
        log = app.main_screen.query_one(RichLog)
        for size in [(200, 50), (100, 30), (60, 20)]:
            await pilot.resize_terminal(*size)
            await settle(pilot)
            assert log.max_scroll_y > 0 and log.scroll_y == log.max_scroll_y, size


async def test_the_log_is_roomy_toggles_maximised_and_shows_focus(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        log = app.main_screen.query_one(RichLog)
        assert log.size.height >= 10
        blurred = log.styles.border_left
        log.focus()
        await pilot.pause()
        assert log.styles.border_left != blurred
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert not app.main_screen.pane.display and log.size.height >= 24
        await pilot.press("ctrl+l")
        await pilot.pause()
        assert app.main_screen.pane.display


# ------------------------------------------------------------------ order


async def test_a_new_pet_beyond_the_loaded_pages_is_not_put_among_them(harness) -> None:
    app = harness.app(page_size=5)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        pane = app.main_screen.pane
        await app.main_screen.run_line('/add "Fluffy" --category 1')
        await settle(pilot)
        assert list(pane.pets) == [1, 2, 3, 4, 5]
        assert "#13 added after the loaded pages" in str(pane.query_one("#pets-info").render())
        for _ in range(2):
            await pilot.press("n")
            await settle(pilot)
        await pilot.press("n")
        await settle(pilot)
        assert list(pane.pets) == list(range(1, 14)) and pane.selected_pet_id() == 13


async def test_f_goes_to_a_new_pet_beyond_the_loaded_pages(harness) -> None:
    app = harness.app(page_size=4)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        pane = app.main_screen.pane
        await app.main_screen.run_line('/add "Far" --category 1')
        await settle(pilot)
        assert list(pane.pets) == [1, 2, 3, 4] and "(f goes there)" in str(pane.query_one("#pets-info").render())
        await pilot.press("f")
        for _ in range(5):  # each page arrives, then the next is asked for, until #13's
            await settle(pilot)
        assert list(pane.pets) == list(range(1, 14)) and pane.selected_pet_id() == 13 and pane.finding == 0
        assert "added after" not in str(pane.query_one("#pets-info").render())


async def test_a_new_pet_goes_to_its_place_when_that_is_loaded() -> None:
    from test_tui_pets_table import TableApp, rows

    app = TableApp(initial=0)
    async with app.run_test(size=(90, 12)) as pilot:
        t = app.table
        t.put_rows(rows(1, 4) + rows(5, 8))
        t.move_cursor(row=4)  # on 6
        index = t.insert_row("4", rows(4, 5)[0][1], order=4)
        await pilot.pause()
        assert index == 3 and [t.render_line(y).text.split()[0] for y in range(1, 8)] == list("1234567")
        assert t.cursor_key == "6"


# ------------------------------------------------------------------ feedback


async def test_page_size_presses_make_one_list(harness) -> None:
    app = harness.app(page_size=1)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        pane = app.main_screen.pane
        pane.page_size_delay = 3600  # the test says when the burst ends
        before, logged = len(harness.tap.seen), len(log_lines(app))
        await pilot.press(*["+"] * 15)
        await settle(pilot)
        assert len(harness.tap.seen) == before and pane.page_size == 100
        pane.flush_page_size()
        await settle(pilot)
        assert [r for r in harness.tap.seen[before:]] == ["GET /v1/pets?limit=100"]
        assert len(log_lines(app)) - logged == 2  # the command and its summary
        assert "/more" not in "\n".join(log_lines(app))  # a first page of one row loads no more by itself


async def test_usage_errors_stay_in_the_log_as_one_line(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await settle(pilot)
        for line in ["/add", "/lsit", "/list --limit 0", "/add --category 2", "/get x", "/list nope"]:
            await app.main_screen.run_line(line)
        await settle(pilot)
        assert len(app.screen.query("Toast")) == 0
        text = log_lines(app)
        entry = next(line for line in text if line.startswith("missing NAME"))
        assert entry.startswith("missing NAME: the pet's name (quote it when it has spaces)  usage: /add NAME")
        assert not any(line.startswith("Usage:") for line in text)


async def test_service_errors_are_one_toast_worded_once(harness) -> None:
    app = harness.app(harness.session())
    harness.tap.replies[("GET", "/v1/store/orders")] = (
        404,
        error_body(404, "not_found", "Not Found: no such resource"),
    )
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await settle(pilot)
        for _ in range(3):
            await app.main_screen.run_line("/orders")
        await settle(pilot)
        assert len(app.screen.query("Toast")) == 1
        text = "\n".join(log_lines(app))
        assert "Not found: no such resource" in text and "Not Found: Not Found" not in text


async def test_no_key_configured_is_said_so(harness) -> None:
    client = make_client(harness.sandbox, api_key="")
    harness.clients.append(client)
    env = EnvInfo(env="custom", base_url="http://127.0.0.1:8080/v1", masked_key=mask_secret(None), sandbox=False)
    app = PetStoreApp(CommandSession(client, env=env, registry=default_registry(), sleep=no_sleep))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        dialog = await wait_for_screen(pilot, ApiKeyScreen)
        said = " ".join(str(s.render()) for s in dialog.query("Static"))
        assert "No API key is configured" in said and "refused the key" not in said
        dialog.query_one(Input).value = harness.sandbox.api_key
        await pilot.press("enter")
        await settle(pilot)
        masked = str(app.main_screen.query_one("#masked-key").render())
        assert masked == f"key {mask_secret(harness.sandbox.api_key)}"
        assert app.main_screen.query_one(EnvBar).env.masked_key != "(none)"


# ------------------------------------------------------------------ keys


async def test_vim_keys_move_in_the_list(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        t = table(app)
        await pilot.press("j", "j", "k")
        assert t.cursor_row == 1
        await pilot.press("G")
        assert t.cursor_row == 11
        await pilot.press("g")
        assert t.cursor_row == 0


async def test_q_quits_from_the_main_screen_only(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("slash", "q")
        assert app.is_running and app.main_screen.chat.prompt.value == "/q"
        await pilot.press("escape", "a")
        await wait_for_screen(pilot, AddPetScreen)
        await pilot.press("q")
        assert app.is_running and app.screen.query_one("#name", Input).value == "q"
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0 and not app.is_running


async def test_the_palette_opens_the_add_form(harness) -> None:
    app = harness.app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"/add")
        for _ in range(20):
            await pilot.pause()
        await pilot.press("enter")
        await wait_for_screen(pilot, AddPetScreen)
        assert app.main_screen.chat.prompt.value == ""


async def test_prompt_history_is_kept_across_runs_and_shared(harness, tmp_path: Path) -> None:
    path = tmp_path / "data" / "history"
    path.parent.mkdir()
    path.write_text("\n# 2026-01-01 00:00:00\n+/list pending\n")  # as petstore chat (prompt_toolkit) writes it
    app = harness.app(history_path=path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("slash", *"list sold", "enter")
        await settle(pilot)
    assert path.read_text().endswith("\n+/list sold\n") and path.stat().st_mode & 0o777 == 0o600
    again = harness.app(history_path=path)
    async with again.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        prompt = again.main_screen.chat.prompt
        prompt.focus()
        await pilot.press("up")
        assert prompt.value == "/list sold"
        await pilot.press("up")
        assert prompt.value == "/list pending"


async def test_the_theme_chosen_is_remembered(harness, tmp_path: Path) -> None:
    from tui.themes import ThemeMemory

    memory = ThemeMemory(tmp_path / "tui-state.json")
    app = harness.app(theme_memory=memory)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.theme = "gruvbox"
        await settle(pilot)
    assert memory.load() == "gruvbox"
    again = harness.app(theme_memory=memory)
    async with again.run_test(size=(100, 30)):
        assert again.theme == "gruvbox"
    flag = harness.app(theme="nord", theme_memory=memory)
    assert flag.theme == "nord"


async def test_production_stays_red_in_every_theme(harness) -> None:
    app = harness.app(harness.session(env="production"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        colours = set()
        for theme in ("textual-dark", "textual-light", "nord", "gruvbox", "solarized-light"):
            app.theme = theme
            await pilot.pause()
            colour = app.main_screen.query_one(EnvBar).styles.background
            colours.add(colour.hex)
        assert colours == {"#B71C1C"}


def test_screenshots_name_the_sandbox_as_a_real_run_does() -> None:
    shots = sorted((Path(__file__).resolve().parents[2] / "docs" / "images").glob("tui-*.svg"))
    assert len(shots) >= 5
    for shot in shots:
        text = shot.read_text(encoding="utf-8")
        assert "sandbox.localhost" not in text and "(in-process" in text, shot.name
