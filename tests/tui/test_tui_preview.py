"""The first page fetched by a child process while the first frame paints (petstore_cli.tui_preview).

In the app: a preview source the test releases (rows rendered by the real renderer from a real
list on the sandbox), a session held on a :class:`threading.Event`. The fork itself: in a fresh
interpreter (``python -c``), as ``petstore`` forks before Textual and before any thread.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from python_support import ROOT, python_run
from textual.pilot import Pilot
from tui_support import Harness, screen_text, wait_for_screen

from bot_commands.session import CommandSession
from petstore_cli.options import build_parser
from petstore_cli.tui_preview import fork_preview, page_preview, worth_forking
from tui.app import PetStoreApp
from tui.preview import EnvLabel, PlainCell, Preview
from tui.screens.detail import DetailScreen
from tui.screens.main import MainScreen
from tui.startup import Started
from tui.widgets.env_bar import EnvBar


class HeldPreview:
    """A preview source that answers when the test says so."""

    def __init__(self, preview: Preview | None) -> None:
        self.preview = preview
        self.release = asyncio.Event()

    async def wait(self) -> Preview | None:
        await self.release.wait()
        return self.preview

    def stop(self) -> None:  # pragma: no cover - run_tui's, not the app's
        pass


def held_start(session: CommandSession) -> tuple[threading.Event, threading.Event, Callable[[], Started]]:
    """A start-up function held until ``release`` is set; ``entered``: the worker is in it."""
    entered, release = threading.Event(), threading.Event()

    def start() -> Started:
        entered.set()
        release.wait(30)
        return Started(session=session)

    return entered, release, start


@dataclass
class Held:
    """An app whose preview and session each wait for the test: ``preview.release``, then ``release``."""

    app: PetStoreApp
    preview: HeldPreview
    entered: threading.Event
    release: threading.Event


@contextlib.asynccontextmanager
async def held_app(harness: Harness, *, env: str = "sandbox") -> AsyncIterator[Held]:
    preview = HeldPreview(await real_preview(harness, env=env))
    entered, release, start = held_start(harness.session(env=env))
    try:
        yield Held(PetStoreApp(start=start, preview=preview), preview, entered, release)
    finally:
        release.set()


async def real_preview(harness: Harness, *, env: str = "sandbox") -> Preview:
    session = harness.session(env=env)
    preview = page_preview((await session.run("/list --limit 20")).result, session.env)
    assert preview is not None
    return preview


async def until(pilot: Pilot[int], done: Callable[[], bool], what: str) -> None:
    """Pause (10 ms at a time, up to 10 s) until ``done()``: the app's workers and timers run meanwhile."""
    for _ in range(1000):
        if done():
            return
        await pilot.pause(0.01)
    raise AssertionError(f"never: {what}")


async def rows_shown(pilot: Pilot[int], main: MainScreen, count: int) -> None:
    await until(pilot, lambda: main.pane.table.row_count == count, f"{count} rows shown")


async def test_the_preview_shows_the_page_and_its_env_until_the_session_lists_it(harness: Harness) -> None:
    async with held_app(harness, env="production") as held:
        app = held.app
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            main = app.main_screen
            assert main.pane.table.loading and main.pane.table.row_count == 0
            held.preview.release.set()
            await rows_shown(pilot, main, 12)
            # the rows are in the table before they are painted (a busy machine showed a blank frame here)
            await until(pilot, lambda: "Kiwi" in screen_text(app), "the preview's rows painted")
            text = screen_text(app)
            assert "PRODUCTION" in text and "key sk-...test" in text and "Rex" in text and "Kiwi" in text
            assert "12 pets shown" in text and "loading…" in text and "key loading…" not in text
            assert not main.pane.table.loading and main.session is None and main.pane.pets == {}
            await until(pilot, held.entered.is_set, "the session's load started after the rows")
            await pilot.press("down", "down", "enter")  # on pet 3: its detail once the session comes
            held.release.set()
            detail = await wait_for_screen(pilot, DetailScreen)
            assert isinstance(detail, DetailScreen) and detail.view.pet_id == 3
            await pilot.press("escape")
            assert main.pane.table.cursor_key == "3" and len(main.pane.pets) == 12  # the session's own page
            assert "end of list" in screen_text(app) and main.query_one(EnvBar).has_class("-env-production")


async def test_a_tab_chosen_before_the_preview_comes_drops_it(harness: Harness) -> None:
    async with held_app(harness) as held:
        app = held.app
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            await pilot.press("4")  # Sold: listed when the session comes
            held.preview.release.set()
            await until(pilot, held.entered.is_set, "the session's load started")
            main = app.main_screen
            assert main.pane.table.row_count == 0 and main.pane.table.loading  # All's rows are not Sold's
            assert "loading…" in screen_text(app)  # and the env bar waits for the session too
            held.release.set()
            await rows_shown(pilot, main, 4)
            assert set(main.pane.pets) == {4, 6, 9, 11}


async def test_a_tab_chosen_while_the_preview_shows_is_listed_when_the_session_comes(harness: Harness) -> None:
    async with held_app(harness) as held:
        app = held.app
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            held.preview.release.set()
            main = app.main_screen
            await rows_shown(pilot, main, 12)
            await pilot.press("3")  # Pending, while All's preview shows and the session loads
            held.release.set()
            await until(pilot, lambda: sorted(main.pane.pets) == [3, 5, 10], "the pending list")
            assert main.tabs.active == "pending" and main.session is not None
            assert main.session.history == ["/list pending --limit 20"]


async def test_a_preview_that_never_comes_holds_nothing_up(harness: Harness) -> None:
    source = HeldPreview(await real_preview(harness))  # never released: the service is slow for the child
    app = PetStoreApp(start=lambda: Started(session=harness.session()), preview=source)
    async with app.run_test(size=(100, 30)) as pilot:
        await rows_shown(pilot, app.main_screen, 12)  # the session came after the head start, and listed
        assert app.main_screen.session is not None and len(app.main_screen.pane.pets) == 12


async def test_a_preview_after_the_session_is_ignored(harness: Harness) -> None:
    cells = (PlainCell("999", "id"), PlainCell("Stale"), PlainCell("1"), PlainCell("sold", "status.sold"))
    stale = Preview(status=None, rows=(("999", cells),), env=EnvLabel(env="staging", base_url="x", masked_key="(none)"))
    source = HeldPreview(stale)
    app = PetStoreApp(start=lambda: Started(session=harness.session()), preview=source)
    async with app.run_test(size=(100, 30)) as pilot:
        main = app.main_screen
        await until(pilot, lambda: bool(main.pane.pets), "the session's page")
        source.release.set()
        for _ in range(20):
            await pilot.pause()
        assert main.pane.table.row_count == 12 and "999" not in main.pane.table._rows
        assert "STAGING" not in screen_text(app)


def parsed(*words: str) -> argparse.Namespace:
    return build_parser().parse_args(list(words))


def test_it_forks_only_on_linux_with_one_thread_a_second_cpu_and_nothing_to_do_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr("threading.active_count", lambda: 1)  # as in petstore before Textual (not in pytest)
    assert worth_forking(parsed()) and worth_forking(parsed("tui", "--play", "x.pets"))
    assert not worth_forking(parsed("--sandbox-reset"))  # the app resets the data before anyone reads it
    monkeypatch.setenv("PETSTORE_TUI__PREVIEW", "false")
    assert not worth_forking(parsed())
    monkeypatch.delenv("PETSTORE_TUI__PREVIEW")
    monkeypatch.setattr("threading.active_count", lambda: 2)
    assert not worth_forking(parsed())  # a fork copies one thread: another one's locks would stay held
    monkeypatch.setattr("threading.active_count", lambda: 1)
    monkeypatch.setattr("sys.platform", "darwin")
    assert not worth_forking(parsed())  # macOS's system libraries start threads of their own
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0})
    assert not worth_forking(parsed())


def test_no_child_when_none_can_be_forked(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_process() -> int:
        raise BlockingIOError("fork: Resource temporarily unavailable")

    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr("threading.active_count", lambda: 1)
    monkeypatch.setattr("os.fork", no_process)
    assert fork_preview(parsed()) is None  # the app loads alone


#: Forks as ``petstore`` does (before Textual), waits for the preview, says what came and whether the child is gone.
FORK = """
import asyncio, json, os, sys
from petstore_cli.options import build_parser
from petstore_cli.tui_preview import fork_preview
child = fork_preview(build_parser().parse_args(sys.argv[1:]))
preview = asyncio.run(child.wait())
try:
    os.waitpid(child.pid, os.WNOHANG)
    reaped = False
except ChildProcessError:
    reaped = True
rows = [[list(cell) for cell in cells] for _, cells in preview.rows] if preview else None
env = preview.env.__dict__ if preview else None
print(json.dumps({"rows": rows, "env": env, "reaped": reaped, "sent": json.dumps(preview.to_json()) if preview else None,
                  "textual": "textual" in sys.modules}))
"""


def fork(tmp_path: Path, config: str) -> dict[str, object]:
    path = tmp_path / "c.toml"
    path.write_text(f'[sandbox]\ndata_dir = "{tmp_path / "sandbox"}"\n{config}')
    out = python_run(FORK.replace("sys.argv[1:]", json.dumps(["--config", str(path)])))
    assert out.stderr == ""  # the child writes nothing anywhere
    result: dict[str, object] = json.loads(out.stdout)
    assert result["reaped"] is True
    assert result["textual"] is False  # forked before Textual, as petstore does
    return result


TWO_CPUS = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="the preview forks only with two CPUs")


@TWO_CPUS
@pytest.mark.slow
def test_the_child_sends_the_first_page_and_the_masked_key_never_the_key(tmp_path: Path) -> None:
    got = fork(tmp_path, "[ui]\npage_size = 5\n")
    assert got["rows"] == [
        [[str(i), "id"], [name, ""], [str(category), ""], [status, f"status.{status}"]]
        for i, name, category, status in [
            (1, "Rex", 1, "available"),
            (2, "Whiskers", 2, "available"),
            (3, "Tweety", 3, "pending"),
            (4, "Goldie", 4, "sold"),
            (5, "Buddy", 1, "pending"),
        ]
    ]
    env = got["env"]
    assert isinstance(env, dict) and env["env"] == "sandbox" and env["masked_key"].startswith("sk-...")
    key = (tmp_path / "sandbox" / "api-key").read_text().strip()
    assert "sk-sandbox-" not in str(got["sent"]) and key not in str(got["sent"])  # the key stays in each process


@TWO_CPUS
@pytest.mark.slow
@pytest.mark.parametrize(
    "config", ['[http]\ntimeout = "soon"\n', '[tui]\ntheme = "neon"\n', "[tui]\npreview = false\n"]
)
def test_a_child_with_nothing_to_show_ends_silently_and_opens_nothing(tmp_path: Path, config: str) -> None:
    got = fork(tmp_path, config)
    assert got["rows"] is None and not (tmp_path / "sandbox").exists()


#: Forks, says the child's pid, stops it when told (a line on stdin), says whether it was still running and is gone.
STOP = """
import os, sys
from petstore_cli.options import build_parser
from petstore_cli.tui_preview import fork_preview
child = fork_preview(build_parser().parse_args(sys.argv[1:]))
print(child.pid, flush=True)
sys.stdin.readline()
alive = os.waitpid(child.pid, os.WNOHANG) == (0, 0)
child.stop()
child.stop()  # idempotent
print(alive, os.path.exists(f"/proc/{child.pid}"), flush=True)
"""


@TWO_CPUS
@pytest.mark.slow
def test_stop_ends_a_child_still_waiting_for_the_service(tmp_path: Path) -> None:
    with socket.socket() as server:  # takes connections (the kernel's backlog) and never answers
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        server.settimeout(60)
        path = tmp_path / "c.toml"
        path.write_text(f'base_url = "http://127.0.0.1:{server.getsockname()[1]}/v1"\napi_key = "sk-test-0123456789"\n')
        with subprocess.Popen(
            [sys.executable, "-c", STOP, "--config", str(path)],
            cwd=ROOT,
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        ) as parent:
            assert parent.stdin is not None and parent.stdout is not None
            try:
                parent.stdout.readline()
                connection, _ = server.accept()  # the child is asking the service for the first page
                connection.close()
                parent.stdin.write("stop\n")
                parent.stdin.flush()
                said, err = parent.communicate(timeout=60)
            finally:
                parent.kill()
    assert said.split() == ["True", "False"] and err == ""


def test_a_preview_crosses_as_json_and_anything_else_is_refused() -> None:
    preview = Preview(
        status="sold",
        rows=(
            (
                "4",
                (
                    PlainCell("4", "id"),
                    PlainCell("[b]Goldie[/b]\x1b[2J"),
                    PlainCell("4"),
                    PlainCell("sold", "status.sold"),
                ),
            ),
        ),
        env=EnvLabel(env="staging", base_url="https://x/v1", masked_key="sk-...abcd", read_only=True),
    )
    assert Preview.from_json(json.loads(json.dumps(preview.to_json()))) == preview
    good = preview.to_json()
    for bad in (
        {**good, "status": 4},
        {**good, "rows": [["4", [[1, "id"]]]]},
        {**good, "rows": [["4", [["x"]]]]},
        {**good, "env": {"env": "staging"}},
        {**good, "rows": None},
    ):
        with pytest.raises((ValueError, TypeError, KeyError)):
            Preview.from_json(bad)
