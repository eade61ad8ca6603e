"""Launching the TUI from the CLI: ``run_tui(session, ...) -> exit code``."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from bot_commands.script import read_script
from bot_commands.session import CommandSession

from .app import PetStoreApp
from .confirm import TuiConfirm
from .player import Player
from .themes import ThemeMemory

#: Typing delay per character when playing a script and none is given.
DEFAULT_DELAY = 0.03


def run_tui(
    session: CommandSession,
    *,
    aclose: Callable[[], Awaitable[object]] | None = None,
    confirm: TuiConfirm | None = None,
    theme: str | None = None,
    page_size: int | None = None,
    play: str | Path | None = None,
    delay: float | None = None,
    exit_after_play: bool = False,
    history_path: Path | None = None,
    theme_memory_path: Path | None = None,
) -> int:
    """Run the app on ``session``; ``aclose`` is awaited when the app ends.

    ``confirm`` is the session's confirmation (the app attaches it to show its
    dialog). Returns the exit code: 0, or with ``--play ... --exit`` the code
    ``petstore run`` gives for the same script (the same script engine).
    ``history_path``: the prompt history shared with ``petstore chat``; ``theme_memory_path``:
    the small state file that remembers the theme chosen in the TUI.
    """
    try:
        player = _player(play, delay, exit_after_play)
    except (OSError, UnicodeDecodeError) as exc:
        print(f"petstore: cannot read script {play}: {exc}", file=sys.stderr)
        return 2
    memory = ThemeMemory(theme_memory_path) if theme_memory_path is not None else None
    app = PetStoreApp(session, page_size=page_size or 20, theme=theme, confirm=confirm, player=player,
                      history_path=history_path, theme_memory=memory)

    async def main() -> None:
        try:
            await app.run_async()
        finally:
            if aclose is not None:
                await aclose()

    asyncio.run(main())
    return app.return_code or 0


def _player(play: str | Path | None, delay: float | None, exit_after: bool) -> Player | None:
    if play is None:
        return None
    return Player(read_script(play), delay=DEFAULT_DELAY if delay is None else delay, exit_after=exit_after)
