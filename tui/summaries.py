"""One-look summaries of command results for the chat log (Rich renderables)."""

from __future__ import annotations

from functools import singledispatch
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from bot_commands import results as r

from .controller import Failure
from .render import literal, pet_row, pretty_json


@singledispatch
def summarize(result: Any) -> RenderableType:
    """Fallback: the result's JSON."""
    to_json = getattr(result, "to_json", None)
    return pretty_json(to_json() if to_json else repr(result))


@summarize.register
def _(result: r.PetList) -> RenderableType:
    where = f" ({result.status})" if result.status else ""
    more = "; more with n or /more" if result.next_url else ""
    return Text(f"{len(result.pets)} pet(s){where}{more}", style="dim")


@summarize.register
def _(result: r.PetCreated) -> RenderableType:
    pet = result.pet
    return Text.assemble(("Created ", "green"), f"#{pet.id} ", literal(pet.name, width=60))


@summarize.register
def _(result: r.PetDetail) -> RenderableType:
    cells = pet_row(result.pet)
    line = Text.assemble("#", cells[0], " ", cells[1], " · category ", cells[2], " · ", cells[3])
    if result.first_notice:
        return Group(line, Text(result.notice.message, style="yellow"))
    return line


@summarize.register
def _(result: r.OrdersListing) -> RenderableType:
    count = len(result.data) if isinstance(result.data, list) else None
    return Text(f"Orders: {count} item(s)" if count is not None else "Orders opened", style="dim")


@summarize.register
def _(result: r.EnvInfo) -> RenderableType:
    mode = " (read-only)" if result.read_only else ""
    return Text.assemble(
        ("env ", "dim"), literal(result.env), ("  url ", "dim"), literal(result.base_url),
        ("  key ", "dim"), literal(result.masked_key), mode,
    )


@summarize.register
def _(result: r.Help) -> RenderableType:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column()
    for entry in result.entries:
        table.add_row(Text(entry.usage), Text(entry.summary))
        if result.topic and entry.details:
            table.add_row("", Text(entry.details, style="dim"))
    return table


@summarize.register
def _(result: r.Notice) -> RenderableType:
    return Text(result.text, style="yellow" if result.level == "warning" else "")


@summarize.register
def _(result: r.ExpectationMet) -> RenderableType:
    return Text.assemble(("✓ ", "green"), f"expect {result.expectation}")


@summarize.register
def _(result: r.HistoryListing) -> RenderableType:
    if not result.lines:
        return Text("No commands yet.", style="dim")
    return Text("\n".join(result.lines), style="dim")


@summarize.register
def _(result: r.Paused) -> RenderableType:
    return Text(f"(paused {result.seconds:g} s)", style="dim")


@summarize.register
def _(result: r.Quit) -> RenderableType:
    return Text("Bye.", style="dim")


def failure_text(failure: Failure) -> RenderableType:
    """A failure as one red line (plus the usage line, when there is one)."""
    line = Text.assemble((f"{failure.title}: ", "bold red"), literal(failure.message))
    if failure.usage:
        return Group(line, Text(f"usage: {failure.usage}", style="dim"))
    return line


def echo_text(line: str) -> Text:
    """The command as it was run, as the log shows it."""
    return Text.assemble(("› ", "bold cyan"), literal(line, style="bold"))
