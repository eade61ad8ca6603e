"""Playing a script inside the TUI: each line typed into the prompt, run, shown.

The player drives the main screen exactly as a person would: screens opened
by the previous command are closed, the line is typed (``delay`` per
character), then run. ``p`` pauses/resumes; ``s`` skips to the end: the
remaining commands still run, without typing delays or ``/sleep`` pauses.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from bot_commands.script import command_word, is_expect

from .controller import Outcome


@dataclass
class PlayReport:
    """How a played script ended: ``exit_code`` as ``petstore run`` would give."""

    ran: int = 0
    failed_line: int | None = None
    message: str = ""
    exit_code: int = 0


@dataclass
class Player:
    """Plays ``lines`` (``(line number, command)`` pairs) on a main screen."""

    lines: list[tuple[int, str]]
    delay: float = 0.03
    exit_after: bool = False
    skipping: bool = False
    running: asyncio.Event = field(default_factory=asyncio.Event)
    report: PlayReport | None = None

    def __post_init__(self) -> None:
        self.running.set()

    @property
    def paused(self) -> bool:
        return not self.running.is_set()

    def toggle_pause(self) -> bool:
        """Pause or resume; returns True when now paused."""
        if self.running.is_set():
            self.running.clear()
        else:
            self.running.set()
        return self.paused

    def skip(self) -> None:
        self.skipping = True
        self.running.set()

    async def play(self, screen: Any) -> PlayReport:
        report = PlayReport()
        for index, (number, line) in enumerate(self.lines):
            await self.running.wait()
            if self.skipping and command_word(line) == "sleep":
                continue
            if not is_expect(line):  # a check leaves the view it checks in place
                await screen.close_overlays()
            await self._type(screen, line)
            screen.chat.type_into("")  # "enter": the line moves from the prompt to the log
            outcome: Outcome = await screen.run_line(line)
            report.ran += 1
            if outcome.failure is not None and not self._expected(index):
                report.failed_line, report.exit_code = number, outcome.failure.exit_code
                report.message = f"line {number}: {line}: {outcome.failure.message}"
                break
        self.report = report
        return report

    def _expected(self, index: int) -> bool:
        """A failure is part of the demo when an ``/expect`` follows it."""
        nxt = index + 1
        return nxt < len(self.lines) and is_expect(self.lines[nxt][1]) and not is_expect(self.lines[index][1])

    async def _type(self, screen: Any, line: str) -> None:
        if self.skipping or self.delay <= 0:
            screen.chat.type_into(line)
            return
        for end in range(1, len(line) + 1):
            await self.running.wait()
            screen.chat.type_into(line[:end])
            await asyncio.sleep(self.delay)
