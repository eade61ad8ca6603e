"""What the TUI's log shows for an outcome: a one-line summary for results the screen shows elsewhere
(the list, a detail, orders, a new pet), the full view for the rest; failures as their error view."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text

from bot_commands.outcome import Failure
from bot_commands.render import to_rich
from bot_commands.results import EnvInfo, OrdersListing, PetCreated, PetDetail, PetList, Result
from bot_commands.views import BlankView, present, present_failure

from .render import literal

#: Results the screen shows in a widget (the env bar too): the log only summarises them.
SHOWN_ELSEWHERE = (PetList, PetCreated, PetDetail, OrdersListing, EnvInfo)


def summarize(result: Result) -> RenderableType:
    shown = present(result)
    notes = [Text(note, style="yellow") for note in shown.notes]
    if isinstance(result, SHOWN_ELSEWHERE) or isinstance(shown.view, BlankView):
        line = literal(shown.summary, style="dim" if not isinstance(result, PetCreated) else "green")
        return line if not notes else Text("\n").join([line, *notes])
    return to_rich(shown.view)


def failure_text(failure: Failure) -> RenderableType:
    """A failure as its red line (plus the usage line, when there is one)."""
    return to_rich(present_failure(failure).view)


def echo_text(line: str) -> Text:
    """The command as it was run, as the log shows it."""
    return Text.assemble(("› ", "bold cyan"), literal(line, style="bold"))
