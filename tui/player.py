"""Playing a script inside the TUI: each line typed into the prompt, run, shown.

The script engine (:func:`bot_commands.script.play_script`) judges the lines
and gives the exit code, exactly as for ``petstore run``; the player is its
face: it drives the main screen as a person would (screens opened by the
previous command are closed, the line is typed, ``delay`` per character, then
run). ``p`` pauses/resumes; ``s`` skips to the end: the remaining commands
still run, without typing delays or ``/sleep`` pauses.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Protocol

from bot_commands.outcome import Outcome
from bot_commands.script import ScriptLine, ScriptReport, ScriptRunner, play_script, script_lines


class Prompt(Protocol):
    """The prompt the player types into."""

    def type_into(self, text: str) -> None: ...


class Stage(Protocol):
    """What the player drives: the main screen (its session, its prompt, the screens over it)."""

    @property
    def live(self) -> ScriptRunner: ...

    @property
    def chat(self) -> Prompt: ...

    async def close_overlays(self) -> None: ...

    async def run_line(self, line: str) -> Outcome: ...


@dataclass
class Player:
    """Plays ``lines`` (``(line number, command)`` pairs) on a main screen."""

    lines: list[tuple[int, str]]
    delay: float = 0.03
    exit_after: bool = False
    skipping: bool = False
    running: asyncio.Event = field(default_factory=asyncio.Event)
    report: ScriptReport | None = None

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

    async def play(self, screen: Stage) -> ScriptReport:
        face = _Typist(self, screen)
        self.report = await play_script(screen.live, script_lines(self.lines), face=face, execute=screen.run_line)
        return self.report


class _Typist:
    """The TUI's script face: types each line into the prompt before the screen runs it."""

    def __init__(self, player: Player, screen: Stage) -> None:
        self.player, self.screen = player, screen

    async def before(self, item: ScriptLine, *, shown: str, name: str) -> bool:
        player, screen = self.player, self.screen
        await player.running.wait()
        if player.skipping and name == "sleep":
            return False
        if name != "expect":  # a check leaves the view it checks in place
            await screen.close_overlays()
        await self._type(item.line)
        screen.chat.type_into("")  # "enter": the line moves from the prompt to the log
        return True

    async def after(self, item: ScriptLine, outcome: Outcome) -> None:
        """The screen has shown the outcome already (its run_line applies it)."""

    async def _type(self, line: str) -> None:
        player, chat = self.player, self.screen.chat
        if player.skipping or player.delay <= 0:
            chat.type_into(line)
            return
        for end in range(1, len(line) + 1):
            await player.running.wait()
            chat.type_into(line[:end])
            await asyncio.sleep(player.delay)
