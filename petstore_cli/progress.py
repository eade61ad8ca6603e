"""A spinner on stderr for a command that takes a while (terminal only; the face decides).

:meth:`Spinner.start` arms it: only a command still running after :data:`DELAY` seconds
shows it, so quick commands print nothing extra. :meth:`update` changes its text
(``/list --all``: pages and pets so far); :meth:`stop` removes it before the result prints.
"""

from __future__ import annotations

import asyncio
from typing import IO

from rich.console import Console
from rich.status import Status
from rich.text import Text

from bot_commands.sanitize import clip, visible

__all__ = ["DELAY", "Spinner"]

#: Seconds a command runs before the spinner shows.
DELAY = 0.3


class Spinner:
    """One spinner line on ``stream`` (a terminal), shown after a delay, gone before output."""

    def __init__(self, stream: IO[str], *, delay: float = DELAY) -> None:
        self.console = Console(file=stream, stderr=True, highlight=False)
        self.delay = delay
        self.label = ""
        self.detail = ""
        self._timer: asyncio.TimerHandle | None = None
        self._status: Status | None = None

    def start(self, label: str) -> None:
        self.stop()
        self.label, self.detail = clip(visible(label), 60), ""
        self._timer = asyncio.get_running_loop().call_later(self.delay, self._show)

    def update(self, detail: str) -> None:
        self.detail = detail
        if self._status is not None:
            self._status.update(self._text())

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._status is not None:
            self._status.stop()
            self._status = None

    def _text(self) -> Text:
        return Text.assemble((self.label, "bold"), (f"  {self.detail}" if self.detail else "", "dim"))

    def _show(self) -> None:
        self._timer = None
        self._status = Status(self._text(), console=self.console, spinner="dots")
        self._status.start()
