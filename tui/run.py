"""Launching the TUI from the CLI: ``run_tui(session, ...)`` or ``run_tui(start=...)`` -> exit code.

Light (Textual and the first frame's widgets): with ``start`` the libraries load behind the
first frame (see :mod:`tui.startup`).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .app import PetStoreApp
from .startup import PreviewSource, Start, StartupError
from .themes import ThemeMemory

if TYPE_CHECKING:  # pragma: no cover
    from bot_commands.session import CommandSession

    from .confirm import TuiConfirm
    from .player import Player

#: Typing delay per character when playing a script and none is given.
DEFAULT_DELAY = 0.03


def run_tui(
    session: CommandSession | None = None,
    *,
    start: Start | None = None,
    aclose: Callable[[], Awaitable[object]] | None = None,
    confirm: TuiConfirm | None = None,
    theme: str | None = None,
    page_size: int | None = None,
    play: str | Path | None = None,
    delay: float | None = None,
    exit_after_play: bool = False,
    history_path: Path | None = None,
    theme_memory_path: Path | None = None,
    preview: PreviewSource | None = None,
) -> int:
    """Run the app on ``session`` (or on what ``start`` builds behind the first frame).

    ``aclose`` is awaited when the app ends (with ``start``: the one :class:`~tui.startup.Started`
    carries). ``confirm`` is the session's confirmation (the app attaches it to show its
    dialog). Returns the exit code: 0, 2 when ``start`` fails (its line on stderr), or with
    ``--play ... --exit`` the code ``petstore run`` gives for the same script.
    ``history_path``: the prompt history shared with ``petstore chat``; ``theme_memory_path``:
    the small state file that remembers the theme chosen in the TUI; ``preview``: the first
    page fetched elsewhere while ``start`` runs (stopped when the app ends, whatever happened).
    """
    try:
        player = make_player(play, delay, exit_after_play)
    except StartupError as exc:
        if preview is not None:
            preview.stop()
        print(f"petstore: {exc}", file=sys.stderr)
        return 2
    memory = ThemeMemory(theme_memory_path) if theme_memory_path is not None else None
    app = PetStoreApp(
        session,
        start=start,
        page_size=page_size or 20,
        theme=theme,
        confirm=confirm,
        player=player,
        history_path=history_path,
        theme_memory=memory,
        preview=preview,
    )

    async def main() -> None:
        try:
            await app.run_async()
        finally:
            if preview is not None:
                preview.stop()
            close = app.aclose or aclose
            if close is not None:
                await close()

    asyncio.run(main())
    if app.start_error is not None:
        print(f"petstore: {app.start_error}", file=sys.stderr)
        return 2
    return app.return_code or 0


def make_player(play: str | Path | None, delay: float | None, exit_after: bool) -> Player | None:
    """The player of a ``--play`` script; StartupError when it cannot be read."""
    if play is None:
        return None
    from bot_commands.script import read_script

    from .player import Player

    try:
        lines = read_script(play)
    except (OSError, UnicodeDecodeError) as exc:
        raise StartupError(f"cannot read script {play}: {exc}") from exc
    return Player(lines, delay=DEFAULT_DELAY if delay is None else delay, exit_after=exit_after)
