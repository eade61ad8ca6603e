"""One neutral view of each result: what to show, never how.

:func:`present` turns a result into a :class:`Presentation` (a view, a one-line
summary, notes to say once); :func:`present_failure` does the same for a
failure. Faces turn views into Rich, Textual widgets, plain text, Markdown or
HTML (:mod:`bot_commands.render`). Text in views is as the service sent it:
renderers make it safe for their medium. Styles are names (``id``,
``status.sold``, ``dim`` ...), mapped to colours by each renderer.
A result type without a view raises :class:`TypeError`: the test that renders
every result type in every renderer catches it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from typing import Any, Literal, TypeGuard, TypeVar

from petstore_api.models import Pet
from petstore_os.records import record

from .errors import Failure
from .results import (
    JSON,
    ApprovalNeeded,
    ApprovalRequested,
    ApprovalRequests,
    AuditListing,
    Cancelled,
    ConfirmationNeeded,
    Denied,
    EnvInfo,
    ExpectationMet,
    Help,
    HistoryListing,
    HistoryScript,
    Notice,
    OrdersListing,
    Paused,
    PetCreated,
    PetDetail,
    PetList,
    Quit,
    Result,
    ScheduleList,
    WatchList,
    WhoAmI,
)

__all__ = [
    "BlankView",
    "CardView",
    "Cell",
    "Column",
    "ErrorView",
    "GroupView",
    "JsonView",
    "LinesView",
    "NoticeView",
    "Presentation",
    "REPLAYED",
    "TableView",
    "View",
    "is_flat_records",
    "notes_of",
    "pet_cells",
    "present",
    "present_failure",
    "status_style",
]

#: Said of a pet the service replayed for a repeated Idempotency-Key (PetCreated.replayed).
REPLAYED = "Pet {id} was already added by this same request; nothing new was created"
#: Widest a name cell is shown before it is clipped; other cells; a card's values.
NAME_WIDTH, CELL_WIDTH, CARD_WIDTH = 60, 40, 500
Level = Literal["info", "success", "warning", "error"]


@record
class Cell:
    text: str
    style: str = ""


@record
class Column:
    title: str
    align: Literal["left", "right"] = "left"
    width: int = CELL_WIDTH
    #: Clipped to ``width`` (ending in an ellipsis) even where output is otherwise whole (a pipe): the whole value
    #: is shown elsewhere (``petstore approvals show ID``), and the columns after it stay in line.
    clipped: bool = False


@record
class TableView:
    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...]
    caption: str = ""
    empty: str = "nothing to show"
    header: bool = True


@record
class CardView:
    title: str
    fields: tuple[tuple[str, Cell], ...]


@record
class NoticeView:
    text: str
    level: Level = "info"


@record
class ErrorView:
    title: str
    message: str
    usage: str | None = None
    hint: str | None = None


@record
class JsonView:
    data: object


@record
class LinesView:
    lines: tuple[Cell, ...]
    empty: str = ""


@record
class BlankView:
    """Nothing to show (``/sleep``, ``/quit``)."""


@record
class GroupView:
    parts: tuple[View, ...]


View = TableView | CardView | NoticeView | ErrorView | JsonView | LinesView | BlankView | GroupView


@record
class Presentation:
    view: View
    summary: str
    notes: tuple[str, ...] = ()  # always notes_of(result): faces that show no view (--json) ask notes_of alone


def status_style(status: str) -> str:
    """The style name of a status value (known, unknown to this client, or absent)."""
    if not status:
        return "status.none"
    return f"status.{status}" if status in ("available", "pending", "sold") else "status.unknown"


def pet_cells(pet: Pet) -> tuple[Cell, Cell, Cell, Cell]:
    """id, name, category id, status of one pet (the list's columns, in every face)."""
    return (
        Cell(str(pet.id), "id"),
        Cell(pet.name),
        Cell(str(pet.category_id)),
        Cell(pet.status_text or "-", status_style(pet.status_text)),
    )


PET_COLUMNS = (Column("id", "right"), Column("name", width=NAME_WIDTH), Column("category", "right"), Column("status"))


def is_flat_records(data: object) -> TypeGuard[list[dict[str, JSON]]]:
    """A non-empty list of objects whose values are all scalars (shown as a table)."""
    scalar = (str, int, float, bool, type(None))
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(row, dict) and all(isinstance(v, scalar) for v in row.values()) for row in data)
    )


def _json_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


# --------------------------------------------------------------------------- per result type

R = TypeVar("R", bound=Result)
_PRESENTERS: dict[type[Result], Callable[[Any, str], Presentation]] = {}


def _presents(kind: type[R]) -> Callable[[Callable[[R, str], Presentation]], Callable[[R, str], Presentation]]:
    def register(func: Callable[[R, str], Presentation]) -> Callable[[R, str], Presentation]:
        _PRESENTERS[kind] = func
        return func

    return register


def present(result: Result, *, prefix: str = "/", one_shot: bool = False, rules: str | None = None) -> Presentation:
    """The view of ``result``; ``prefix`` is how the face's commands start (``/``, ``!``).

    ``one_shot``: the face runs this one command and ends (``petstore list``, ``run -c``), so
    nothing suggests a follow-up command such as ``/more``. ``rules``: how commands are typed on this face, the
    last line of the command list (default: the prompt's rule, the leading ``/`` optional).
    """
    if one_shot and isinstance(result, PetList):
        return _pet_list_view(result, prefix, one_shot=True)
    if rules is not None and isinstance(result, Help):
        return _help_view(result, prefix, rules=rules)
    presenter = _PRESENTERS.get(type(result))
    if presenter is None:
        raise TypeError(f"no view for {type(result).__name__}: add one in bot_commands/views.py")
    return presenter(result, prefix)


def present_failure(failure: Failure, *, prefix: str = "/", commands: Collection[str] = ()) -> Presentation:
    """The view of ``failure``; the commands it names (``/help``, ``/add``: any of ``commands``) are shown
    with the face's ``prefix`` (``!help`` in Matrix, ``/pets help`` in Slack), as the user has to type them."""
    usage = failure.usage
    if usage and prefix != "/" and usage.startswith("/"):
        usage = prefix + usage[1:]

    def shown(text: str) -> str:
        return with_prefix(text, prefix=prefix, commands=commands)

    message = failure.problem or failure.message
    repeated = f"{failure.title.lower()}: "
    if message.lower().startswith(repeated):  # "no more pages: run /list first" under the title "No more pages"
        message = message[len(repeated) :]
    view = ErrorView(
        title=failure.title,
        message=shown(message),
        usage=usage,
        hint=shown(failure.hint) if failure.hint else failure.hint,
    )
    return Presentation(view=view, summary=shown(failure.text))


#: ``/name`` at the start of a word (not inside a path such as ``/v1/pets`` or an address).
_COMMAND_REF = re.compile(r"(?<![^\s(])/([a-z][a-z0-9_-]*)(?![\w/])")


def with_prefix(text: str, *, prefix: str, commands: Collection[str]) -> str:
    """``text`` with each ``/name`` of a command in ``commands`` written as ``prefix`` + name."""
    if prefix == "/" or not commands or "/" not in text:
        return text
    return _COMMAND_REF.sub(lambda found: prefix + found[1] if found[1] in commands else found[0], text)


@_presents(PetList)
def _pet_list(result: PetList, prefix: str) -> Presentation:
    return _pet_list_view(result, prefix)


def _pet_list_view(result: PetList, prefix: str, *, one_shot: bool = False) -> Presentation:
    count = _plural(len(result.pets), "pet")
    where = f" with status {result.status}" if result.status else ""
    pages = f" from {result.pages} pages" if result.pages > 1 else ""
    rows = tuple(pet_cells(pet) for pet in result.pets)
    view = TableView(
        PET_COLUMNS, rows, caption=count + pages + _more(result, prefix, one_shot=one_shot), empty=f"no pets{where}"
    )
    follow = "; more on the next page" if result.next_url else ""
    if result.truncated:
        follow = f"; stopped at the {result.pages}-page limit of --all, more pets follow"
    return Presentation(view=view, summary=f"{count}{where}{pages}{follow}")


def _more(result: PetList, prefix: str, *, one_shot: bool) -> str:
    """What the caption says about the pets after these."""
    if result.truncated:
        return f"; stopped at the {result.pages}-page limit of --all: more pets follow (narrow it with a status)"
    if not result.next_url:
        return ""
    if one_shot:
        return "; more on the next page (--all fetches every page)"
    return f"; more on the next page ({prefix}more, or {prefix}list --all for every page)"


def _pet_card(pet: Pet, title: str) -> CardView:
    name = pet.name if len(pet.name) <= CARD_WIDTH else f"{pet.name[: CARD_WIDTH - 1]}… ({len(pet.name)} characters)"
    fields = [
        ("id", Cell(str(pet.id), "id")),
        ("name", Cell(name)),
        ("categoryId", Cell(str(pet.category_id))),
        ("status", Cell(pet.status_text or "(not set)", status_style(pet.status_text))),
    ]
    fields += [(key, Cell(_json_text(value))) for key, value in (pet.model_extra or {}).items()]
    return CardView(title=title, fields=tuple(fields))


@_presents(PetCreated)
def _created(result: PetCreated, prefix: str) -> Presentation:
    pet = result.pet
    if result.replayed:
        summary = f"#{pet.id} {pet.name} (added earlier by this same request)"
        return Presentation(view=_pet_card(pet, f"Pet {pet.id}"), summary=summary, notes=notes_of(result))
    return Presentation(view=_pet_card(pet, f"Added pet {pet.id}"), summary=f"Created #{pet.id} {pet.name}")


def notes_of(result: Result) -> tuple[str, ...]:
    """What ``present(result)`` says once beside the view, without building the view (``--json`` shows only this)."""
    if isinstance(result, PetDetail) and result.first_notice:
        return (f"note: {result.notice.message}",)
    if isinstance(result, PetCreated) and result.replayed:
        return (REPLAYED.format(id=result.pet.id),)
    return ()


@_presents(PetDetail)
def _detail(result: PetDetail, prefix: str) -> Presentation:
    pet = result.pet
    notes = notes_of(result)
    summary = f"#{pet.id} {pet.name} · category {pet.category_id} · {pet.status_text or 'no status'}"
    return Presentation(view=_pet_card(pet, f"Pet {pet.id}"), summary=summary, notes=notes)


@_presents(OrdersListing)
def _orders(result: OrdersListing, prefix: str) -> Presentation:
    data = result.data
    count = len(data) if isinstance(data, list) else None
    summary = f"Orders: {count} item(s)" if count is not None else "Orders (as the service sent them)"
    if isinstance(data, list) and not data:
        return Presentation(view=NoticeView("no orders"), summary=summary)
    if not is_flat_records(data):
        return Presentation(view=JsonView(data), summary=summary)
    columns: dict[str, None] = {}
    for row in data:
        columns.update(dict.fromkeys(row))
    rows = tuple(tuple(Cell(_json_text(row[k])) if k in row else Cell("") for k in columns) for row in data)
    return Presentation(view=TableView(tuple(Column(k) for k in columns), rows), summary=summary)


@_presents(EnvInfo)
def _env(info: EnvInfo, prefix: str) -> Presentation:
    env_style = "production" if info.env == "production" else "env"
    fields = (
        ("environment", Cell(info.env, env_style)),
        ("base URL", Cell(info.base_url)),
        ("API key", Cell(info.masked_key)),
        ("read-only", Cell("yes" if info.read_only else "no")),
    )
    mode = " (read-only)" if info.read_only else ""
    summary = f"env {info.env}  url {info.base_url}  key {info.masked_key}{mode}"
    return Presentation(view=CardView(title="", fields=fields), summary=summary)


@_presents(WhoAmI)
def _whoami(result: WhoAmI, prefix: str) -> Presentation:
    fields = (
        ("you", Cell(result.actor)),
        ("role", Cell(result.role, "bold")),
        ("where", Cell(result.where)),
        ("may run", Cell(" ".join([c.replace("/", prefix, 1) for c in result.commands]))),
    )
    return Presentation(view=CardView(title="", fields=fields), summary=f"{result.actor}: {result.role}")


@_presents(Help)
def _help(result: Help, prefix: str) -> Presentation:
    """Help at a prompt (where the leading / is optional); a chat face passes its own rules (see ``present``)."""
    explains = f"{prefix}help COMMAND explains one."
    rules = f"Commands work with or without the leading {prefix}; {explains}" if prefix == "/" else explains
    return _help_view(result, prefix, rules=rules)


def _help_view(result: Help, prefix: str, *, rules: str) -> Presentation:
    """Help with commands written as typed on the face (its ``prefix``), ``rules`` the last line of a list."""

    def cmd(text: str) -> str:  # every /name in help is a command
        return text if prefix == "/" else _COMMAND_REF.sub(lambda found: prefix + found[1], text)

    if result.topic and result.entries:
        entry = result.entries[0]
        lines = [Cell(cmd(entry.usage), "bold"), Cell(cmd(entry.summary))]
        if entry.aliases:
            lines.append(Cell("aliases: " + ", ".join(cmd(a) for a in entry.aliases), "dim"))
        lines += [Cell(cmd(line), "dim") for line in entry.details.splitlines()]
        return Presentation(view=LinesView(tuple(lines)), summary=cmd(entry.usage))
    lines = [
        cell for e in result.entries for cell in (Cell(cmd(e.usage), "bold"), Cell(f"    {cmd(e.summary)}", "dim"))
    ]
    view = LinesView((*lines, Cell(rules, "dim")))
    count = len(result.entries)
    return Presentation(view=view, summary=f"{_plural(count, 'command')}; {prefix}help COMMAND explains one")


@_presents(Notice)
def _notice(result: Notice, prefix: str) -> Presentation:
    level: Level = "warning" if result.level == "warning" else "info"
    return Presentation(view=NoticeView(result.text, level), summary=result.text)


@_presents(ExpectationMet)
def _met(result: ExpectationMet, prefix: str) -> Presentation:
    text = f"✓ expect {result.expectation}"
    return Presentation(view=NoticeView(text, "success"), summary=text)


@_presents(HistoryListing)
def _history(result: HistoryListing, prefix: str) -> Presentation:
    view = LinesView(tuple(Cell(line) for line in result.lines), empty="(no commands yet)")
    return Presentation(view=view, summary=_plural(len(result.lines), "command"))


@_presents(HistoryScript)
def _history_script(result: HistoryScript, prefix: str) -> Presentation:
    text = f"{_plural(result.count, 'command')} offered as the file {result.name} (nothing written on the server)"
    return Presentation(view=NoticeView(text, "success"), summary=text)


@_presents(Paused)
def _paused(result: Paused, prefix: str) -> Presentation:
    return Presentation(view=BlankView(), summary=f"(paused {result.seconds:g} s)")


@_presents(Quit)
def _quit(result: Quit, prefix: str) -> Presentation:
    return Presentation(view=BlankView(), summary="Bye.")


@_presents(ConfirmationNeeded)
def _confirm(result: ConfirmationNeeded, prefix: str) -> Presentation:
    if not result.fields:
        text = f"To {result.what}, reply {prefix}confirm {result.code} within {result.ttl} seconds."
        return Presentation(view=NoticeView(text, "warning"), summary=text)
    text = f"To {result.action}, reply {prefix}confirm {result.code} within {result.ttl} seconds. It sends:"
    card = CardView(title="", fields=tuple((name, Cell(value)) for name, value in result.fields))
    return Presentation(view=GroupView((NoticeView(text, "warning"), card)), summary=f"{text} {result.what}")


@_presents(Cancelled)
def _cancelled(result: Cancelled, prefix: str) -> Presentation:
    text = f"Cancelled: {result.what} (code {result.code}); nothing was sent."
    return Presentation(view=NoticeView(text, "info"), summary=text)


AUDIT_COLUMNS = (
    Column("time (UTC)", width=19),
    Column("who"),
    Column("role"),
    Column("command", width=NAME_WIDTH),
    Column("outcome"),
    Column("details", width=NAME_WIDTH),
)


@_presents(AuditListing)
def _audit(result: AuditListing, prefix: str) -> Presentation:
    count = len(result.records)
    rows = tuple(
        (
            Cell(record.time[:19].replace("T", " ")),  # the file's times are UTC
            Cell(record.actor),
            Cell(record.role),
            Cell(record.line),
            Cell(record.outcome + (" (applied unknown)" if record.applied == "unknown" else "")),
            Cell(" · ".join(f"{label} {value}" for label, value in record.details)),
        )
        for record in result.records
    )
    caption = f"the last {_plural(count, 'audit line')} of this room, oldest first"
    view = TableView(AUDIT_COLUMNS, rows, caption=caption if count else "", empty="no audit lines for this room yet")
    return Presentation(view=view, summary=f"{_plural(count, 'audit line')} of this room")


@_presents(ApprovalNeeded)
def _approval(result: ApprovalNeeded, prefix: str) -> Presentation:
    who = f"It is posted in {result.room}, where someone" if result.room else "Someone else"
    text = (
        f"{result.asker} asks to {result.action or result.what} on {result.env}: it needs a second person. "
        f"{who} answers {prefix}approve {result.code} or {prefix}deny {result.code} [reason] within "
        f"{_duration(result.ttl)}."
    )
    if not result.fields:
        return Presentation(view=NoticeView(f"{text} It would {result.what}.", "warning"), summary=text)
    card = CardView(title="", fields=tuple((name, Cell(value)) for name, value in result.fields))
    return Presentation(
        view=GroupView((NoticeView(f"{text} It sends:", "warning"), card)), summary=f"{text} {result.what}"
    )


@_presents(Denied)
def _denied(result: Denied, prefix: str) -> Presentation:
    why = f": {result.reason}" if result.reason else ""
    text = f"Denied by {result.by}: {result.what} asked by {result.asker} (code {result.code}); nothing was sent{why}"
    return Presentation(view=NoticeView(text, "info"), summary=text)


def _duration(seconds: int) -> str:
    if seconds >= 7200 and seconds % 3600 == 0:
        return f"{seconds // 3600} hours"
    if seconds >= 120:
        return f"{round(seconds / 60)} minutes"
    return f"{seconds} seconds"


@_presents(WatchList)
def _watches(result: WatchList, prefix: str) -> Presentation:
    watched = ", ".join(status or "every new pet" for status in result.statuses)
    now = f"This room watches: {watched}." if watched else f"This room watches nothing ({prefix}watch [STATUS] starts)."
    lines = tuple(Cell(text) for text in (result.text, now) if text)
    return Presentation(view=LinesView(lines), summary=" ".join(cell.text for cell in lines))


@_presents(ScheduleList)
def _schedules(result: ScheduleList, prefix: str) -> Presentation:
    columns = (
        Column("id", "right"),
        Column("every"),
        Column("command", width=NAME_WIDTH),
        Column("by"),
        Column("next"),
    )
    rows = tuple(
        (Cell(str(row.id), "id"), Cell(row.rhythm), Cell(row.command), Cell(row.creator), Cell(row.next_run))
        for row in result.rows
    )
    caption = f"times in {result.timezone}"
    empty = f"no schedules here ({prefix}every RHYTHM COMMAND makes one)"
    table = TableView(columns=columns, rows=rows, caption=caption, empty=empty)
    if result.text:
        return Presentation(view=GroupView((NoticeView(result.text, "success"), table)), summary=result.text)
    return Presentation(view=table, summary=_plural(len(rows), "schedule"))


@_presents(ApprovalRequested)
def _approval_requested(result: ApprovalRequested, prefix: str) -> Presentation:
    room = f" in {result.room}" if result.room else ""
    note = (
        f"Request {result.code} waits for a second person's approval{room} (!approve {result.code}) for "
        f"{_duration(result.expires_in)}: {result.what}. See it with: petstore approvals show {result.code}"
    )
    return Presentation(view=LinesView((Cell(result.code),)), summary=note, notes=(note,))


#: The columns of ``petstore approvals``; ``show`` gives every field.
APPROVAL_COLUMNS = ("id", "asker", "what", "state", "age")


@_presents(ApprovalRequests)
def _approval_requests(result: ApprovalRequests, prefix: str) -> Presentation:
    if result.detail and result.records:  # a card: the fields that hold something (the JSON keeps every one)
        record = result.records[0]
        shown = ((name, _approval_cell(name, value)) for name, value in record.items())
        fields = tuple((name, Cell(text)) for name, text in shown if text)
        return Presentation(view=CardView(title="", fields=fields), summary=f"request {record.get('id')}")
    rows = tuple(
        tuple(Cell(_approval_cell(name, record.get(name))) for name in APPROVAL_COLUMNS) for record in result.records
    )
    columns = tuple(
        Column(name, align="right" if name == "age" else "left", clipped=name == "what") for name in APPROVAL_COLUMNS
    )
    view = TableView(columns=columns, rows=rows, empty="no requests for approval")
    return Presentation(view=view, summary=_plural(len(rows), "request"))


def _approval_cell(name: str, value: JSON) -> str:
    """A field of a request as a person reads it: ``yes``/``no``, an age, ``key=value`` pairs, nested JSON as JSON
    (never Python's spelling of it); empty when unset."""
    if name == "age" and isinstance(value, int | float):
        return _age(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return ", ".join(f"{key}={_json_text(item)}" for key, item in value.items())
    if isinstance(value, list):
        return _json_text(value)
    return "" if value is None else str(value)


def _age(seconds: float) -> str:
    """``42s``, ``5m``, ``3h``, ``2d``: how long ago, roughly."""
    for unit, size in (("d", 86_400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{max(int(seconds), 0)}s"
