"""The formats contract of the one-shot faces (``petstore run``, ``petstore list`` ...): one record shape everywhere.

``table`` (Rich, :mod:`.render`) and ``plain`` (:func:`.render_text.to_plain`) are for people and come from the
views. The machine formats come from the *records* of a result (:func:`data_of`), never from a view:

- a record is a JSON object with the spec's field names (``id``, ``name``, ``categoryId``, ``status``), as the
  service sent it: a pet without a status has no ``status`` key in JSON and an empty cell in csv/tsv;
- ``csv``/``tsv``: a header of the record's fields, one row per record (an empty pet list is the header alone;
  data of no known shape, such as an empty orders list, is nothing); cells are whole, control characters visible;
- ``json``: one array of the records of every command (as ``gh --json``), ``--jq EXPR`` filters it (the ``jq``
  extra) and ``--template TEXT`` renders each record (``{{.name}}``: :class:`Template`);
- ``jsonl`` (``--json``): one object a command, ``{"command", "ok", "result"|"error"}`` (:func:`record`).

Prose is never data: a notice (``no orders``, a deprecation note, the ``--all`` page guard) goes to stderr.
``--fields id,name`` selects fields in every format (:func:`select`).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterable, Sequence

from petstore_os import records as rec

from .outcome import Outcome
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
    Help,
    HistoryListing,
    HistoryScript,
    OrdersListing,
    PetCreated,
    PetDetail,
    PetList,
    Result,
    ScheduleList,
    WatchList,
    WhoAmI,
)
from .sanitize import visible
from .views import Cell, Column, TableView

__all__ = [
    "FORMATS",
    "MACHINE_FORMATS",
    "PET_FIELDS",
    "Data",
    "OutputError",
    "Template",
    "cell",
    "compile_jq",
    "data_of",
    "data_view",
    "jq_lines",
    "parse_fields",
    "record",
    "select",
    "to_csv",
    "to_json",
    "to_tsv",
    "truncation",
]

FORMATS = ("table", "plain", "tsv", "csv", "json", "jsonl")
MACHINE_FORMATS = ("tsv", "csv", "json", "jsonl")
#: A pet's fields as the spec names them, in the spec's order (extra fields the service sends follow).
PET_FIELDS = ("id", "name", "categoryId", "status")
Record = dict[str, JSON]


class OutputError(ValueError):
    """A bad ``--fields``, ``--jq`` or ``--template`` (input error: exit 2)."""


@rec.record
class Data:
    """The records of one result and its fields (the csv header): known ones first, then any others seen."""

    records: tuple[Record, ...]
    fields: tuple[str, ...]


def _fields_of(records: Iterable[Record], first: Sequence[str] = ()) -> tuple[str, ...]:
    seen = dict.fromkeys(first)
    for item in records:
        seen.update(dict.fromkeys(item))
    return tuple(seen)


def _objects(value: JSON) -> tuple[Record, ...]:
    """A JSON value as records: objects as they are, anything else as ``{"value": ...}``."""
    items = value if isinstance(value, list) else [] if value is None else [value]
    return tuple(item if isinstance(item, dict) else {"value": item} for item in items)


def _pets(raw: Sequence[JSON]) -> Data:
    records = _objects(list(raw))
    return Data(records, _fields_of(records, PET_FIELDS))


def data_of(result: Result) -> Data | None:
    """The records of ``result``, or None when it is prose (a notice, an expectation met, a pause)."""
    if isinstance(result, PetList):
        return _pets(result.raw or [pet.to_wire() for pet in result.pets])
    if isinstance(result, PetCreated | PetDetail):
        return _pets([result.raw or result.pet.to_wire()])
    if isinstance(result, HistoryListing):
        records: tuple[Record, ...] = tuple({"command": line} for line in result.lines)
        return Data(records, ("command",))
    if isinstance(result, WatchList):
        return Data(tuple({"watch": status or "all"} for status in result.statuses), ("watch",))
    if isinstance(result, ScheduleList):
        return Data(tuple(_objects([row.to_json() for row in result.rows])), ("id", "every", "command", "by", "next"))
    if isinstance(result, AuditListing):
        records = tuple(record.to_json() for record in result.records)
        return Data(records, _fields_of(records))
    if isinstance(result, ApprovalRequests):
        return Data(result.records, _fields_of(result.records))
    if isinstance(
        result,
        OrdersListing
        | Help
        | EnvInfo
        | WhoAmI
        | HistoryScript
        | ConfirmationNeeded
        | Cancelled
        | ApprovalNeeded
        | ApprovalRequested
        | Denied,
    ):
        records = _objects(result.to_json())
        return Data(records, _fields_of(records))
    return None


def parse_fields(text: str) -> tuple[str, ...]:
    """``id,name`` -> ``("id", "name")``; an empty field is an error."""
    fields = tuple(part.strip() for part in text.split(","))
    if not all(fields):
        raise OutputError(f"--fields takes field names separated by commas, e.g. id,name (got {text!r})")
    return fields


def select(data: Data, fields: Sequence[str]) -> Data:
    """Only ``fields``, in that order; a field the command does not have is an error that lists those it has."""
    unknown = [name for name in fields if name not in data.fields]
    if unknown and data.fields:
        raise OutputError(f"unknown field '{unknown[0]}' in --fields; this command's fields: {', '.join(data.fields)}")
    records = tuple({name: item[name] for name in fields if name in item} for item in data.records)
    return Data(records, tuple(fields))


def cell(value: JSON) -> str:
    """One field as text: a string as it is, a missing value or null empty, anything else as JSON."""
    if value is None:
        return ""
    return visible(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def _rows(data: Data) -> list[list[str]]:
    if not data.fields:
        return []
    return [list(map(visible, data.fields))] + [[cell(item.get(name)) for name in data.fields] for item in data.records]


def to_tsv(data: Data) -> str:
    """Tab-separated: the header, then one line per record; tabs and newlines in cells are shown as ␉ and ␊."""
    return "".join("\t".join(row) + "\n" for row in _rows(data))


def to_csv(data: Data) -> str:
    """RFC 4180 CSV (``\\n`` line ends): the header, then one row per record; commas and quotes quoted."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(_rows(data))
    return out.getvalue()


def to_json(records: Sequence[Record]) -> str:
    """The records as one indented JSON array (ASCII: no character in it can act on a terminal)."""
    return json.dumps(list(records), ensure_ascii=True, indent=2) + "\n"


def data_view(data: Data) -> TableView:
    """The records as a table for people (``--fields`` in the table and plain formats)."""
    columns = tuple(Column(name, "right" if name in ("id", "categoryId") else "left") for name in data.fields)
    rows = tuple(tuple(Cell(cell(item.get(name))) for name in data.fields) for item in data.records)
    return TableView(columns, rows)


def truncation(result: Result) -> dict[str, object]:
    """``{"truncated": true, "pages": N}`` when ``--all`` stopped at its page guard, else ``{}``."""
    if isinstance(result, PetList) and result.truncated:
        return {"truncated": True, "pages": result.pages}
    return {}


def _selected(value: JSON, fields: Sequence[str]) -> JSON:
    if isinstance(value, dict):
        return {name: value[name] for name in fields if name in value}
    if isinstance(value, list):
        return [_selected(item, fields) for item in value]
    return value


def record(outcome: Outcome, *, label: str = "", fields: Sequence[str] = ()) -> dict[str, object]:
    """The JSON object of one command (``petstore run --json``, one per line); ``fields`` selects the result's.

    ``label`` (``line 3``) prefixes the message of a failed ``/expect``, as the human output does.
    """
    result = outcome.result
    if result is not None:
        replayed = {"replayed": True} if isinstance(result, PetCreated) and result.replayed else {}
        value = _selected(result.to_json(), fields) if fields else result.to_json()
        return {"command": outcome.line, "ok": True, "result": value, **truncation(result), **replayed}
    failure = outcome.failure
    assert failure is not None
    error = failure.to_json()
    if failure.kind == "expectation_failed" and label:
        error["message"] = f"{label}: {error['message']}"
    return {"command": outcome.line, "ok": False, "error": error}


# --------------------------------------------------------------------------- --template

_ACTION = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_FIELD = re.compile(r"\s*\.((?:[A-Za-z_][\w-]*)(?:\.[A-Za-z_][\w-]*)*)?\s*")


@rec.record
class Template:
    """``--template``: the Go-template subset ``{{.field}}`` (``{{.a.b}}`` nested, ``{{.}}`` the whole record).

    Each record renders to one line. A missing field renders empty, a string as it is (control characters
    visible), anything else as JSON. Any other action (``range``, pipes, functions) is refused when parsed: the
    template can read the record and nothing else.
    """

    parts: tuple[str | tuple[str, ...], ...]

    @classmethod
    def parse(cls, text: str) -> Template:
        parts: list[str | tuple[str, ...]] = []
        end = 0
        for found in _ACTION.finditer(text):
            parts.append(text[end : found.start()])
            field = _FIELD.fullmatch(found[1])
            if field is None:
                raise OutputError(
                    f"--template supports {{{{.field}}}} only (e.g. '{{{{.id}}}} {{{{.name}}}}'), not {found[0]!r}"
                )
            parts.append(tuple(field[1].split(".")) if field[1] else ())
            end = found.end()
        rest = text[end:]
        if "{{" in rest:
            raise OutputError("--template has a '{{' without its '}}'")
        return cls((*parts, rest))

    def render(self, item: Record) -> str:
        return "".join(part if isinstance(part, str) else cell(_lookup(item, part)) for part in self.parts)


def _lookup(item: JSON, path: tuple[str, ...]) -> JSON:
    for key in path:
        if not isinstance(item, dict):
            return None
        item = item.get(key)
    return item


# --------------------------------------------------------------------------- --jq

JqProgram = Callable[[JSON], list[JSON]]


def compile_jq(expression: str) -> JqProgram:
    """``--jq EXPR`` compiled by jq itself (the ``jq`` package, the ``petstore[jq]`` extra)."""
    try:
        import jq
    except ImportError:
        raise OutputError("--jq needs the jq extra: pip install 'petstore[jq]'") from None
    try:
        program = jq.compile(expression)
    except ValueError as exc:
        raise OutputError(f"--jq: {_first_line(exc)}") from None

    def run(value: JSON) -> list[JSON]:
        try:
            return list(program.input_value(value).all())
        except ValueError as exc:
            raise OutputError(f"--jq: {_first_line(exc)}") from None

    return run


def _first_line(exc: Exception) -> str:
    return visible(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)


def jq_lines(program: JqProgram, value: JSON) -> str:
    """What ``program`` makes of ``value``, one result a line: strings raw (as ``gh --jq``), the rest compact JSON."""
    return "".join(
        (visible(out) if isinstance(out, str) else json.dumps(out, ensure_ascii=True)) + "\n" for out in program(value)
    )
