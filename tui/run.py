"""Launching the TUI from the CLI: ``run_tui(session_or_composition, ...) -> exit code``."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from bot_commands.script import read_script

from .app import PetStoreApp
from .confirm import TuiConfirm
from .player import Player

#: Typing delay per character when playing a script and none is given.
DEFAULT_DELAY = 0.03


def run_tui(
    target: Any,
    *,
    theme: str | None = None,
    page_size: int | None = None,
    play: str | Path | None = None,
    delay: float | None = None,
    exit_after_play: bool = False,
    confirm: TuiConfirm | None = None,
) -> int:
    """Run the app on a CommandSession (or a Composition with ``.session`` and ``aclose()``).

    Without a ``confirm`` on the session, the TUI installs its own modal
    confirmation (writes on production ask first). Returns the exit code:
    0, or with ``--play ... --exit`` the code ``petstore run`` would give.
    """
    session = getattr(target, "session", target)
    closer = getattr(target, "aclose", None)
    if getattr(session, "confirm", None) is None:
        session.confirm = confirm = confirm or TuiConfirm()
    try:
        player = _player(play, delay, exit_after_play)
    except (OSError, UnicodeDecodeError) as exc:
        print(f"petstore: cannot read script {play}: {exc}", file=sys.stderr)
        return 2
    app = PetStoreApp(session, page_size=page_size or 20, theme=theme, confirm=confirm, player=player)

    async def main() -> None:
        try:
            await app.run_async()
        finally:
            if closer is not None:
                await closer()

    asyncio.run(main())
    return app.return_code or 0


def _player(play: str | Path | None, delay: float | None, exit_after: bool) -> Player | None:
    if play is None:
        return None
    return Player(read_script(play), delay=DEFAULT_DELAY if delay is None else delay, exit_after=exit_after)
