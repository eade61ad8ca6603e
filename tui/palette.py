"""The command palette's slash commands: those the session's actor may run."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:  # pragma: no cover
    from textual.screen import Screen

    from bot_commands.registry import Command


class SlashHost(Protocol):
    """What the palette asks of the app it serves (the TUI's app)."""

    @property
    def main_screen(self) -> Screen[Any]: ...

    def slash_command(self, line: str, *, run: bool) -> None: ...


def _commands(app: object) -> list[Command]:
    session = getattr(app, "session", None)
    return session.allowed_commands() if session is not None else []


#: Commands that have a screen of their own: the palette opens it (the main screen's action).
SCREENS = {"add": "add"}


class SlashCommands(Provider):
    """Offers every allowed ``/command``: ones with a screen open it, ones without required
    arguments run at once, the others are put in the prompt for their arguments."""

    async def discover(self) -> Hits:
        for cmd in _commands(self.app):
            yield DiscoveryHit(f"/{cmd.name}", partial(self._choose, cmd), help=cmd.summary)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for cmd in _commands(self.app):
            text = f"/{cmd.name}"
            score = max(matcher.match(text), matcher.match(cmd.summary) * 0.5)
            if score > 0:
                help_text = f"{cmd.usage} · {cmd.summary}"
                yield Hit(score, matcher.highlight(text), partial(self._choose, cmd), help=help_text)

    def _choose(self, cmd: Command) -> None:
        app = cast(SlashHost, self.app)
        if cmd.name in SCREENS:
            self.app.call_later(app.main_screen.run_action, SCREENS[cmd.name])
            return
        needs_args = any(arg.required for arg in cmd.args)
        app.slash_command(f"/{cmd.name}", run=not needs_args)
