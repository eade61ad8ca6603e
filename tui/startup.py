"""What a start-up worker hands the TUI (light: the first frame imports it).

The face (``petstore_cli``) gives :class:`tui.app.PetStoreApp` a ``start`` function; the app
paints its first frame, then runs ``start`` in a thread worker. ``start`` loads the settings,
the client and the session and returns :class:`Started`, or raises :class:`StartupError`
with the one line to show (a bad configuration): the app then ends with exit code 2.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from petstore_os.records import record

if TYPE_CHECKING:  # pragma: no cover
    from bot_commands.session import CommandSession

    from .confirm import TuiConfirm
    from .player import Player
    from .preview import Preview


class StartupError(Exception):
    """The TUI cannot start: ``str(exc)`` is the one line for the user (exit code 2)."""


@record(kw_only=True)
class Started:
    """The session and how to run it, as built behind the first frame."""

    session: CommandSession
    aclose: Callable[[], Awaitable[object]] | None = None
    confirm: TuiConfirm | None = None
    page_size: int = 20
    theme: str | None = None
    player: Player | None = None
    warnings: tuple[str, ...] = ()
    #: Seconds between live refreshes of the list (``w``; ``[tui] refresh_interval``).
    refresh_interval: float = 5.0


#: The face's start-up function, run in a thread after the first frame.
Start = Callable[[], Started]


class PreviewSource(Protocol):
    """Where a :class:`Preview` comes from: awaited once; ``stop`` when the app ends (idempotent)."""

    async def wait(self) -> Preview | None: ...

    def stop(self) -> None: ...
