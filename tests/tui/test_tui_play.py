"""Scripts played inside the TUI (issue 6), /history save, and run_tui."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_support import settle

from bot_commands.script import parse_script
from tui.player import Player
from tui.run import run_tui
from tui.screens.detail import DetailScreen

TOUR = """\
# a short tour
/list sold
/expect count 4
/add "Demo Dog" --category 2 --status available
/expect name "Demo Dog"
/get $last
/sleep 1
/list available --limit 3
/get 999
/expect error 404
"""


async def test_a_played_script_leaves_the_panes_in_the_expected_state(harness) -> None:
    player = Player(parse_script(TOUR), delay=0)
    app = harness.app(player=player)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        assert player.report is not None and player.report.exit_code == 0
        assert player.report.ran == 9
        screen = app.main_screen
        assert screen.tabs.active == "available"
        assert list(screen.pane.pets) == [1, 2, 7]
        assert isinstance(app.screen, DetailScreen) and app.screen.view.failure.kind == "not_found"
        assert '/add "Demo Dog" --category 2 --status available' in app.session.history


async def test_a_failing_expectation_stops_the_play_and_exits_1(harness) -> None:
    script = "/list sold\n\n/expect count 99\n/list pending\n"
    player = Player(parse_script(script), delay=0, exit_after=True)
    app = harness.app(player=player)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
    assert app.return_code == 1
    assert player.report.failed.where == 3 and "expected count 99" in player.report.message
    assert "/list pending" not in app.session.history


async def test_typing_is_visible_and_pause_resume(harness) -> None:
    player = Player(parse_script("/list pending\n"), delay=0.001)
    player.toggle_pause()
    app = harness.app(player=player)
    async with app.run_test(size=(110, 32)) as pilot:
        await pilot.pause()
        assert player.paused and app.main_screen.chat.prompt.value == ""
        await pilot.press("p")
        await settle(pilot)
        assert player.report.ran == 1 and app.main_screen.tabs.active == "pending"


async def test_history_save_replays_what_was_done_with_keys_and_forms(harness, tmp_path: Path) -> None:
    app = harness.app()
    saved = tmp_path / "session.petstore"
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        await app.main_screen.submit_add(_values("Saved Pet", 5, "sold"))
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("escape")
        await app.main_screen.run_line(f"/history save {saved}")
        await settle(pilot)
    lines = [line for _, line in parse_script(saved.read_text())]
    assert lines == [
        "/list --limit 20",
        "/list sold --limit 20",
        "/add 'Saved Pet' --category 5 --status sold",
        "/get 13",
    ]


def _values(name: str, category: int, status: str):
    from tui.validation import FormValues

    return FormValues(name=name, category_id=category, status=status)


def test_run_tui_plays_and_exits_with_the_scripts_code(harness, tmp_path: Path, monkeypatch) -> None:
    script = tmp_path / "demo.petstore"
    script.write_text("/list sold\n/expect count 4\n")
    closed: list[bool] = []

    async def aclose() -> None:
        closed.append(True)

    async def headless(self, **kwargs):
        async with self.run_test(size=(110, 32)) as pilot:
            for _ in range(20):
                await pilot.pause()
                await self.workers.wait_for_complete()

    monkeypatch.setattr("tui.app.PetStoreApp.run_async", headless)
    assert run_tui(harness.session(), aclose=aclose, play=script, delay=0, exit_after_play=True) == 0
    assert closed == [True]
    script.write_text("/list sold\n/expect count 5\n")
    assert run_tui(harness.session(), aclose=aclose, play=script, delay=0, exit_after_play=True) == 1
    assert run_tui(harness.session(), aclose=aclose, play=tmp_path / "missing", exit_after_play=True) == 2


PARITY_SCRIPTS = {
    "ok": ("/list sold\n/expect count 4\n", 0),
    "expectation fails": ("/list sold\n/expect count 5\n", 1),
    "bad input": ("/list --limit 0\n/list\n", 2),
    "service says no": ("/get 999\n/list\n", 1),
    "expected failure": ("/get 999\n/expect error 404\n/list\n", 0),
    "bad input, then a wrong expectation": ("/list --limit 0\n/expect error 404\n", 2),
    "unknown command": ("/lst\n", 2),
}


@pytest.mark.parametrize("name", sorted(PARITY_SCRIPTS))
def test_run_and_tui_play_end_with_the_same_exit_code(harness, tmp_path: Path, monkeypatch, name: str) -> None:
    import asyncio
    import io

    from petstore_cli.runner import run_script

    text, expected = PARITY_SCRIPTS[name]
    script = tmp_path / "parity.petstore"
    script.write_text(text)
    lines = [(number, line) for number, line in enumerate(text.splitlines(), start=1)]
    ran = asyncio.run(run_script(harness.session(), lines, out=io.StringIO(), err=io.StringIO()))

    async def headless(self, **kwargs):
        async with self.run_test(size=(110, 32)) as pilot:
            while self.is_running and self.return_code is None:
                await pilot.pause()
                await self.workers.wait_for_complete()

    monkeypatch.setattr("tui.app.PetStoreApp.run_async", headless)
    played = run_tui(harness.session(), play=script, delay=0, exit_after_play=True)
    assert (ran, played) == (expected, expected)
