"""What the TUI's log shows for an outcome: a one-line summary for results the screen shows elsewhere
(the list, a detail, orders, a new pet), the full view for the rest; failures as their error view."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text

from bot_commands.errors import Failure
from bot_commands.render import to_rich
from bot_commands.results import EnvInfo, OrdersListing, PetCreated, PetDetail, PetList, Result
from bot_commands.views import BlankView, present

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


def failure_message(failure: Failure) -> str:
    """What went wrong, worded once: the log and the toast say the same (the title is not repeated)."""
    message = failure.problem or failure.message if failure.usage else failure.message
    title = failure.title.lower()
    if message.lower().startswith(title) and message[len(title) : len(title) + 1] in (":", " "):
        message = message[len(title) :].lstrip(": ")  # "Not found: Not Found: no such resource"
    return message


def failure_text(failure: Failure) -> Text:
    """A failure as one log entry: a usage error says what was wrong, then the usage (no title);
    others their title, the message and the hint."""
    message = literal(failure_message(failure), style="red" if failure.kind == "usage" else "")
    if failure.kind == "usage":
        if failure.usage:
            message.append("  usage: ", style="dim").append_text(literal(failure.usage, style="dim"))
        return message
    hint = [literal(f"  {failure.hint}", style="dim")] if failure.hint else []
    return Text.assemble((f"{failure.title}: ", "bold red"), message, *hint)


def echo_text(line: str) -> Text:
    """The command as it was run, as the log shows it."""
    return Text.assemble(("› ", "bold cyan"), literal(line, style="bold"))
