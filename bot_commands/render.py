"""Rich renderables of results for line-based terminals (chat and ``petstore run``).

All text from the service goes through :func:`visible` and into ``rich.text.Text``
(never markup), so ``[b]x[/b]`` shows literally and no escape byte gets out.
"""

from __future__ import annotations

import json
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from petstore_api.models import Pet

from .errors import ExpectationFailed, UsageError, error_info, hint_for, one_line
from .results import (
    EnvInfo,
    ExpectationMet,
    Help,
    HistoryListing,
    Notice,
    OrdersListing,
    PetCreated,
    PetDetail,
    PetList,
    Result,
)
from .sanitize import clip, visible

__all__ = ["render", "notices", "error_message", "render_error", "echo", "safe", "STATUS_STYLES"]

NAME_WIDTH = 60
CELL_WIDTH = 40
CARD_WIDTH = 500
STATUS_STYLES = {"available": "green", "pending": "yellow", "sold": "magenta"}


def safe(value: Any, width: int | None = None, style: str = "") -> Text:
    """Untrusted value -> a Text with control characters visible, optionally clipped."""
    text = visible(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
    return Text(clip(text, width) if width else text, style=style)


def _status(pet: Pet) -> Text:
    if not pet.status_text:
        return Text("-", style="dim")
    if not pet.status_known:
        return safe(pet.status_text, CELL_WIDTH, style="dim italic")
    return Text(pet.status_text, style=STATUS_STYLES.get(pet.status_text, ""))


def _pet_table(result: PetList) -> RenderableType:
    if not result.pets:
        what = f" with status {result.status}" if result.status else ""
        return Text(f"no pets{what}", style="dim")
    # Text, not str, in every cell: a str would go through markup and emoji parsing (and the
    # first one loads rich's emoji table, ~7 ms of start-up), for the same output.
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column(Text("id"), justify="right", style="cyan", no_wrap=True)
    table.add_column(Text("name"), overflow="fold")
    table.add_column(Text("category"), justify="right")
    table.add_column(Text("status"), no_wrap=True)
    for pet in result.pets:
        table.add_row(Text(str(pet.id)), safe(pet.name, NAME_WIDTH), Text(str(pet.category_id)), _status(pet))
    return Group(table, Text(_caption(result), style="dim"))


def _caption(result: PetList) -> str:
    count = f"{len(result.pets)} pet" + ("" if len(result.pets) == 1 else "s")
    pages = f" from {result.pages} pages" if result.pages > 1 else ""
    more = "; more on the next page (/more, or /list --all for every page)" if result.next_url else ""
    return count + pages + more


def _card(pet: Pet, title: str) -> RenderableType:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row("id", Text(str(pet.id), style="cyan"))
    name = safe(pet.name, CARD_WIDTH)
    if len(pet.name) > CARD_WIDTH:
        name.append(f" ({len(pet.name)} characters)", style="dim")
    grid.add_row("name", name)
    grid.add_row("categoryId", str(pet.category_id))
    grid.add_row("status", _status(pet))
    for key, value in (pet.model_extra or {}).items():
        grid.add_row(safe(key, CELL_WIDTH), safe(value, CARD_WIDTH))
    return Group(Text(title, style="bold"), grid)


def _orders(data: Any) -> RenderableType:
    if isinstance(data, list) and not data:
        return Text("no orders", style="dim")
    if _flat_records(data):
        columns: dict[str, None] = {}
        for row in data:
            columns.update(dict.fromkeys(row))
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        for key in columns:
            table.add_column(safe(key, CELL_WIDTH), overflow="fold")
        for row in data:
            table.add_row(*(safe(row[k], CELL_WIDTH) if k in row else Text("") for k in columns))
        return table
    pretty = json.dumps(data, indent=2, ensure_ascii=False)
    return Text(visible(pretty, keep_newlines=True))


def _flat_records(data: Any) -> bool:
    scalar = (str, int, float, bool, type(None))
    return isinstance(data, list) and all(
        isinstance(row, dict) and all(isinstance(v, scalar) for v in row.values()) for row in data
    )


def _help(result: Help) -> RenderableType:
    if result.topic and result.entries:
        entry = result.entries[0]
        lines: list[RenderableType] = [Text(entry.usage, style="bold"), Text(entry.summary)]
        if entry.aliases:
            lines.append(Text("aliases: " + ", ".join(entry.aliases), style="dim"))
        lines += [Text(line, style="dim") for line in entry.details.splitlines()]
        return Group(*lines)
    lines = [Text.assemble((entry.usage, "bold"), "\n    ", (entry.summary, "dim")) for entry in result.entries]
    footer = Text("Commands work with or without the leading /; /help COMMAND explains one.", style="dim")
    return Group(*lines, footer)


def _env(info: EnvInfo) -> RenderableType:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    grid.add_row("environment", Text(info.env, style="bold red" if info.env == "production" else "green"))
    grid.add_row("base URL", safe(info.base_url))
    grid.add_row("API key", safe(info.masked_key))
    grid.add_row("read-only", "yes" if info.read_only else "no")
    return grid


def render(result: Result) -> RenderableType | None:
    """The renderable for ``result`` (None: nothing to show, e.g. /sleep, /quit)."""
    if isinstance(result, PetList):
        return _pet_table(result)
    if isinstance(result, PetCreated):
        return _card(result.pet, f"Added pet {result.pet.id}")
    if isinstance(result, PetDetail):
        return _card(result.pet, f"Pet {result.pet.id}")
    if isinstance(result, OrdersListing):
        return _orders(result.data)
    if isinstance(result, Help):
        return _help(result)
    if isinstance(result, EnvInfo):
        return _env(result)
    if isinstance(result, Notice):
        return safe(result.text, style="yellow" if result.level == "warning" else "")
    if isinstance(result, ExpectationMet):
        return Text(f"✓ expect {visible(result.expectation)}", style="green")
    if isinstance(result, HistoryListing):
        return Text("\n".join(visible(line) for line in result.lines) or "(no commands yet)")
    return None


def notices(result: Result) -> list[str]:
    """One-line notices a face should show once (the getPet deprecation)."""
    if isinstance(result, PetDetail) and result.first_notice:
        return [visible(one_line(f"note: {result.notice.message}"))]
    return []


def error_message(exc: BaseException) -> str:
    """The one line a face shows for an error (safe to print)."""
    if isinstance(exc, ExpectationFailed):
        text = f"expectation failed: {exc}"
    elif isinstance(exc, UsageError):
        text = str(exc)
    else:
        info = error_info(exc)
        text = info.message if info.code == "internal" else f"error: {exc}"
        if hint := hint_for(exc):
            text = f"{text}. {hint}"
    return visible(one_line(text))


def render_error(exc: BaseException) -> Text:
    return Text(error_message(exc), style="bold red")


def echo(line: str) -> Text:
    """How a command line is shown when echoed (run --echo, chat transcript)."""
    return Text.assemble(("› ", "dim"), (visible(line), "bold"))
