"""The first frame comes before the libraries (issue 20): the app's chrome while the session loads.

``PetStoreApp(start=...)`` paints :class:`tui.screens.main.MainScreen` without a session (its
loading state), then runs ``start`` in a thread worker and attaches the session to the same screen. Here ``start`` is held on a :class:`threading.Event` (never a sleep) so the
first frame can be inspected before the load completes.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from python_support import python_run
from tui_support import Harness, screen_text, wait_for_screen

from tui.app import PetStoreApp
from tui.screens.help import HelpScreen
from tui.screens.main import MainScreen
from tui.startup import Started, StartupError
from tui.widgets.env_bar import EnvBar
from tui.widgets.pets_pane import PetsPane

ROOT = Path(__file__).resolve().parents[2]


def held(started: Started | Exception) -> tuple[threading.Event, threading.Event, PetStoreApp]:
    """An app whose start-up blocks until ``release`` is set; ``entered``: the worker is in it."""
    entered, release = threading.Event(), threading.Event()

    def start() -> Started:
        entered.set()
        release.wait(30)
        if isinstance(started, Exception):
            raise started
        return started

    return entered, release, PetStoreApp(start=start)


async def test_the_first_frame_shows_loading_never_a_guess(harness: Harness) -> None:
    session = harness.session(env="production")  # what the load will find: red bar, a real key
    entered, release, app = held(Started(session=session))
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            assert entered.wait(30)  # the load has started and is held: this is the first frame
            first = app.screen
            assert isinstance(first, MainScreen) and first.session is None and app.session is None
            bar = app.screen.query_one(EnvBar)
            assert bar.has_class("-env-unknown") and not bar.has_class("-env-production")
            text = screen_text(app)
            assert "petstore" in text and "loading…" in text and "key loading…" in text
            assert "PRODUCTION" not in text and "SANDBOX" not in text and "sk-" not in text
            assert "1 All" in text and "4 Sold" in text and "● ●" in text  # tabs, the table loading
            assert app.screen.query_one(PetsPane).table.loading and "/help · type a command" in text
            for _ in range(50):  # the keys footer comes a frame after the first
                if "Quit" in screen_text(app):
                    break
                await pilot.pause()
            assert "q Quit" in screen_text(app) and "a Add" in screen_text(app)
            await pilot.press("/", "g", "e", "t")  # typing while loading goes to the prompt...
            release.set()
            main = await wait_for_screen(pilot, MainScreen)
            for _ in range(200):
                if main.pane.pets:
                    break
                await pilot.pause()
            assert main.chat.prompt.value == "/get"  # ...and stays there
            assert main.query_one(EnvBar).has_class("-env-production")
            text = screen_text(app)
            assert "PRODUCTION" in text and "key sk-...test" in text and "loading…" not in text
            assert main.pane.pets and app.main_screen is main
            assert main is first and len(app.screen_stack) == 1  # one screen, mounted once
    finally:
        release.set()


async def test_the_bar_fills_in_place_when_the_session_comes(harness: Harness) -> None:
    """The loaded env replaces "loading…" in the same labels; READ-ONLY appears only when it is."""
    entered, release, app = held(Started(session=harness.session(read_only=True)))
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            assert entered.wait(30)
            bar = app.main_screen.query_one(EnvBar)
            labels = list(bar.children)
            assert "READ-ONLY" not in screen_text(app)
            release.set()
            for _ in range(200):
                if app.main_screen.pane.pets:
                    break
                await pilot.pause()
            text = screen_text(app)
            assert "SANDBOX" in text and "READ-ONLY" in text and "loading…" not in text
            assert list(bar.children)[: len(labels)] == labels  # the same labels, updated
            assert [label.id for label in bar.children][-1] == "read-only"
    finally:
        release.set()


async def test_a_line_submitted_while_loading_runs_once_the_session_comes(harness: Harness) -> None:
    entered, release, app = held(Started(session=harness.session()))
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            assert entered.wait(30)
            main = app.main_screen
            await pilot.press("a")  # the form needs the session: a bell while loading, no form
            assert app.screen is main
            await pilot.press("o")  # /orders waits for the session
            await pilot.press("/", *"env", "enter")
            assert main.session is None and main.chat.prompt.value == ""
            release.set()
            for _ in range(200):
                if app.screen is not main:
                    break
                await pilot.pause()
            assert "No orders." in screen_text(app)  # /orders ran: its screen
            await pilot.press("escape")
            for _ in range(200):
                if "› /env" in screen_text(app):
                    break
                await pilot.pause()
            text = screen_text(app)
            assert "› /orders" in text and "› /env" in text  # both echoed in the log: they ran
    finally:
        release.set()


async def test_a_failed_start_ends_the_app_with_its_line_and_2() -> None:
    entered, release, app = held(StartupError("invalid setting c.toml: http.timeout: not a number"))
    release.set()
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(200):
            if app.start_error is not None:
                break
            await pilot.pause()
    assert app.start_error == "invalid setting c.toml: http.timeout: not a number"
    assert app.return_code == 2


async def test_a_dialog_has_its_styles(harness: Harness) -> None:
    app = PetStoreApp(harness.session())
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("question_mark")
        help_screen = await wait_for_screen(pilot, HelpScreen)
        dialog = help_screen.query_one("#help-dialog")
        assert dialog.styles.width is not None and dialog.styles.width.value == 90  # dialogs.tcss's #help-dialog
        assert dialog.styles.border_top[0] == "thick"  # app.tcss's .dialog
        assert help_screen.styles.align == ("center", "middle")  # app.tcss's ModalScreen


@pytest.mark.slow
def test_the_first_frame_imports_no_settings_models_client_or_sandbox() -> None:
    """What `petstore` imports before the TUI's first frame: Textual and the first frame's widgets. Not argparse (bare
    `petstore` is parsed behind the first frame), nor the chat log's RichLog (rich.pretty, attrs: with its first entry)."""
    code = (
        "import sys\n"
        "import petstore_cli.main, petstore_cli.dispatch, petstore_cli.tui_preview, petstore_cli.tui_start, tui.app, tui.run\n"
        "heavy = {'httpx', 'pydantic', 'pydantic_settings', 'pydantic_core', 'starlette', 'uvicorn', 'sqlite3',\n"
        "         'petstore_server', 'petstore_api.models', 'petstore_api.settings', 'bot_commands.session',\n"
        "         'petstore_cli.settings.model', 'petstore_cli.settings.load', 'bot_commands.results', 'tui.summaries', 'tui.screens.detail', 'json', 'shlex',\n"
        "         'argparse', 'petstore_cli.options', 'rich.pretty', 'attr', 'textual.widgets._rich_log', 'tui.widgets.chat_log',\n"
        "         'bot_commands.errors'}\n"
        "print(sorted(heavy & set(sys.modules)), 'tui.screens.main' in sys.modules)\n"
    )
    out = python_run(code)
    assert out.stdout.strip() == "[] True"  # the main screen is the first frame, without the libraries


async def test_a_browser_session_is_its_person_and_writes_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``petstore web`` starts each session's TUI with ``--web-actor NAME --web-role ROLE``: the actor is
    ``web:NAME``, and the policy keeps the host's files out of reach (``/history save`` gives the script back)."""
    from bot_commands.policy import Actor, Role
    from bot_commands.results import HistoryScript
    from petstore_cli.options import build_parser
    from petstore_cli.tui_start import build

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    args = build_parser().parse_args(["tui", "--web-actor", "dana", "--web-role", "viewer"])
    started = build(args)
    try:
        session = started.session
        assert session.actor == Actor(id="web:dana", role=Role.VIEWER, where="web")
        assert not session.policy.host_files
        script = await session.execute(f"/history save {tmp_path / 'x.pets'}")
        assert isinstance(script, HistoryScript) and script.name == "x.pets"
        assert not (tmp_path / "x.pets").exists()
    finally:
        assert started.aclose is not None
        await started.aclose()


async def test_a_script_for_the_browser_is_not_saved_at_a_terminal(harness: Harness) -> None:
    """Textual would save a delivery in the Downloads dir at a terminal: a host file after all; refused instead."""
    from bot_commands.session import CommandSession
    from petstore_os.records import replace

    made = harness.session()
    session = CommandSession.from_parts(replace(made.parts, policy=replace(made.policy, host_files=False)))
    app = PetStoreApp(session)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await app.main_screen.run_line("/history save demo.pets")
        await pilot.pause()
        toasts = "\n".join(str(toast.render()) for toast in app.screen.query("Toast"))
        assert "Not saved: this session may not write files on this machine." in toasts
