"""Output formats of the one-shot faces (``petstore run``, ``petstore list`` ...): rows from the views.

``table`` (Rich, :mod:`.render`) and ``plain`` (:func:`.render_text.to_plain`) are for people;
``tsv`` and ``csv`` turn the same views into a header row and one row per record (a pet, an
order, a card's fields), for ``cut``, ``awk`` and spreadsheets; ``json``/``jsonl`` print each
command's result as the service sent it (:func:`record`). Cells are whole (never clipped) and
control characters are made visible (:func:`visible`), so no cell holds a tab, a newline or an
escape sequence; csv quotes what needs quoting, tsv needs none.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator

from .outcome import Outcome
from .results import PetCreated, PetList, Result
from .sanitize import visible
from .views import BlankView, CardView, ErrorView, GroupView, JsonView, LinesView, NoticeView, TableView, View

__all__ = ["FORMATS", "Rows", "record", "to_csv", "to_rows", "to_tsv", "truncation"]

FORMATS = ("table", "plain", "tsv", "csv", "json", "jsonl")

#: (header or None, rows): what a view is as a table of text.
Rows = tuple[tuple[str, ...] | None, list[tuple[str, ...]]]


def to_rows(view: View) -> Iterator[Rows]:
    """The tables of ``view``: a table as its header and rows, a card as labels over one row of values."""
    if isinstance(view, TableView):
        yield tuple(c.title for c in view.columns), [tuple(cell.text for cell in row) for row in view.rows]
    elif isinstance(view, CardView):
        yield tuple(label for label, _ in view.fields), [tuple(cell.text for _, cell in view.fields)]
    elif isinstance(view, LinesView):
        yield None, [(cell.text,) for cell in view.lines]
    elif isinstance(view, NoticeView):
        yield None, [(view.text,)]
    elif isinstance(view, ErrorView):
        yield None, [(f"{view.title}: {view.message}",)]
    elif isinstance(view, JsonView):
        yield None, [(json.dumps(view.data, ensure_ascii=False),)]
    elif isinstance(view, GroupView):
        for part in view.parts:
            yield from to_rows(part)
    else:
        assert isinstance(view, BlankView)


def _lines(view: View) -> Iterator[tuple[str, ...]]:
    for header, rows in to_rows(view):
        if header is not None:
            yield tuple(visible(h) for h in header)
        for row in rows:
            yield tuple(visible(cell) for cell in row)


def to_tsv(view: View) -> str:
    """Tab-separated: one line per row; tabs and newlines in cells are shown as ␉ and ␊."""
    return "".join("\t".join(row) + "\n" for row in _lines(view))


def to_csv(view: View) -> str:
    """RFC 4180 CSV (``\\n`` line ends): fields with commas or quotes are quoted."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows(_lines(view))
    return out.getvalue()


def truncation(result: Result) -> dict[str, object]:
    """``{"truncated": true, "pages": N}`` when ``--all`` stopped at its page guard, else ``{}``."""
    if isinstance(result, PetList) and result.truncated:
        return {"truncated": True, "pages": result.pages}
    return {}


def record(outcome: Outcome, *, label: str = "") -> dict[str, object]:
    """The JSON object of one command (``petstore run --json``, one per line).

    ``label`` (``line 3``) prefixes the message of a failed ``/expect``, as the human output does.
    """
    result = outcome.result
    if result is not None:
        replayed = {"replayed": True} if isinstance(result, PetCreated) and result.replayed else {}
        return {"command": outcome.line, "ok": True, "result": result.to_json(), **truncation(result), **replayed}
    failure = outcome.failure
    assert failure is not None
    error = failure.to_json()
    if failure.kind == "expectation_failed" and label:
        error["message"] = f"{label}: {error['message']}"
    return {"command": outcome.line, "ok": False, "error": error}
