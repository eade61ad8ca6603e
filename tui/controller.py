"""Decision logic of the TUI, free of widgets so it is testable on its own.

Every action of the TUI becomes a slash-command line (built here), is run by
the command session, and comes back as an :class:`Outcome` (a result or a
classified failure). Nothing here raises on a failed request.
"""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from bot_commands.registry import REGISTRY
from petstore_api.models import LIMIT_DEFAULT, LIMIT_MAX, LIMIT_MIN, SUNSET_DATE

#: Tab id -> the ``status`` filter it lists (None: every status).
TABS: dict[str, str | None] = {
    "all": None,
    "available": "available",
    "pending": "pending",
    "sold": "sold",
}
#: Page sizes the ``+``/``-`` keys step through.
PAGE_STEPS = (1, 5, 10, 20, 50, 100)


def tab_for_status(status: str | None) -> str:
    """The tab showing ``status`` (unknown statuses show under All)."""
    return status if status in TABS else "all"


def clamp_page_size(size: int) -> int:
    return max(LIMIT_MIN, min(LIMIT_MAX, int(size)))


def step_page_size(size: int, direction: int) -> int:
    """The next page size up (+1) or down (-1) from ``size``."""
    if direction > 0:
        return next((s for s in PAGE_STEPS if s > size), LIMIT_MAX)
    return next((s for s in reversed(PAGE_STEPS) if s < size), LIMIT_MIN)


def list_line(status: str | None, limit: int = LIMIT_DEFAULT) -> str:
    """The ``/list`` line for a tab and page size."""
    parts = ["/list"]
    if status:
        parts.append(status)
    parts += ["--limit", str(clamp_page_size(limit))]
    return " ".join(parts)


def add_line(*, name: str, category_id: int, status: str | None) -> str:
    """The ``/add`` line for the form's values (the name quoted for the parser).

    A name that could read as an option or a ``key=value`` goes after ``--``.
    """
    options = ["--category", str(category_id)] + (["--status", status] if status else [])
    quoted = shlex.quote(name)
    if name.startswith("-") or "=" in name:
        return " ".join(["/add", *options, "--", quoted])
    return " ".join(["/add", quoted, *options])


def get_line(pet_id: int) -> str:
    return f"/get {pet_id}"


def command_name(line: str) -> str:
    """The registry's name for a line's command, aliases resolved ('' when blank or unknown)."""
    words = line.strip().split(maxsplit=1)
    command = REGISTRY.get(words[0]) if words else None
    return command.name if command is not None else ""


#: Commands whose answers replace the pets list: a newer one cancels an older.
LIST_COMMANDS = frozenset({"list", "more"})


def worker_group(line: str) -> tuple[str, bool]:
    """(worker group, exclusive) for a line: lists cancel older lists; writes never."""
    name = command_name(line)
    if name in LIST_COMMANDS:
        return "list", True
    if name == "get":
        return "detail", True
    return "command", False


# --------------------------------------------------------------------------- outcomes


@dataclass(frozen=True, slots=True)
class Failure:
    """A failed command, classified for the UI."""

    kind: str  # usage | auth | unreachable | not_found | gone | bad_request | api | error
    message: str
    status: int | None = None
    usage: str | None = None
    exit_code: int = 1  # as ``petstore run``: 1 failed at the service, 2 bad input

    @property
    def title(self) -> str:
        return _TITLES.get(self.kind, "Error")


_TITLES = {
    "usage": "Usage",
    "auth": "Not authorised",
    "unreachable": "Service unreachable",
    "not_found": "Not found",
    "gone": "Operation gone",
    "bad_request": "Rejected by the service",
    "api": "Service error",
    "protocol": "Unexpected answer",
    "refused": "Not done",
    "read_only": "Read-only session",
    "declined": "Cancelled",
    "expectation": "Expectation failed",
}
_COMMAND_KINDS = {"read_only": "read_only", "declined": "declined", "expectation_failed": "expectation"}


@dataclass(frozen=True, slots=True)
class Outcome:
    """What came of one line: exactly one of ``result`` and ``failure`` is set."""

    line: str
    result: Any = None
    failure: Failure | None = None
    seq: int = 0

    @property
    def ok(self) -> bool:
        return self.failure is None


def classify(exc: BaseException) -> Failure:
    """Map an exception of the command layer or client onto a :class:`Failure`."""
    from bot_commands.errors import CommandError, UsageError
    from petstore_api import errors as e

    if isinstance(exc, UsageError):
        return Failure("usage", exc.problem, usage=exc.usage, exit_code=2)
    if isinstance(exc, CommandError):
        return Failure(_COMMAND_KINDS.get(exc.kind, "refused"), str(exc), exit_code=exc.exit_code)
    if isinstance(exc, e.APIError):
        return _classify_api(exc)
    if isinstance(exc, e.TransportError):
        return Failure("unreachable", str(exc))
    if isinstance(exc, e.ProtocolError):
        return Failure("protocol", str(exc))
    if isinstance(exc, (e.InputError, e.ConfigError)):
        return Failure("usage", str(exc), exit_code=2)
    if isinstance(exc, e.PetStoreError):
        return Failure("error", str(exc))
    return Failure("error", f"{type(exc).__name__}: {exc}")


def _classify_api(exc: Any) -> Failure:
    status = getattr(exc, "status", None)
    message = exc.error.message if getattr(exc, "error", None) else str(exc)
    kind = {400: "bad_request", 401: "auth", 404: "not_found", 410: "gone"}.get(status, "api")
    return Failure(kind, f"{message} (HTTP {status})", status=status)


class Runner:
    """Runs lines on the session; numbers them so stale answers can be dropped."""

    def __init__(self, execute: Callable[[str], Awaitable[Any]]) -> None:
        self._execute = execute
        self._seq = 0

    async def run(self, line: str) -> Outcome:
        """Run ``line`` and classify what came of it."""
        self._seq += 1
        seq = self._seq
        try:
            result = await self._execute(line)
        except Exception as exc:  # noqa: BLE001 - the TUI never dies of a request
            return Outcome(line, failure=classify(exc), seq=seq)
        return Outcome(line, result=result, seq=seq)


@dataclass
class Freshness:
    """Per-kind guard: an answer older than the last applied one is dropped."""

    applied: dict[str, int] = field(default_factory=dict)

    def accept(self, kind: str, seq: int) -> bool:
        if seq < self.applied.get(kind, 0):
            return False
        self.applied[kind] = seq
        return True


# --------------------------------------------------------------------------- detail


def getpet_gone(today: date) -> bool:
    """True once getPet's sunset date has come."""
    return today >= SUNSET_DATE


def falls_back(failure: Failure | None, *, known: bool) -> bool:
    """Whether a failed getPet should fall back to the list's data."""
    return known and failure is not None and failure.kind in {"not_found", "gone"}


def pet_fields(raw: dict[str, Any]) -> list[tuple[str, str]]:
    """Every field of a pet body, id/name/categoryId/status first; an absent status says so."""
    first = [k for k in ("id", "name", "categoryId", "status") if k in raw]
    rest = sorted(k for k in raw if k not in first)
    fields = [(k, _field_text(raw[k])) for k in first + rest]
    if "status" not in raw:
        fields.insert(len([k for k in first if k != "status"]), ("status", "(not set)"))
    return fields


def _field_text(value: Any) -> str:
    import json

    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class DetailView:
    """What the detail screen shows: fields, or a failure; notes about getPet."""

    pet_id: int
    fields: list[tuple[str, str]] = field(default_factory=list)
    notice: str = ""
    fallback: str = ""
    failure: Failure | None = None


DEPRECATION_NOTE = (
    "getPet is deprecated and will be removed on 5 December 2030; "
    "use listPets (GET /pets) with a status filter instead."
)


def detail_from_result(result: Any) -> DetailView:
    """A /get result (PetDetail) as a detail view."""
    notice = getattr(getattr(result, "notice", None), "message", "") or DEPRECATION_NOTE
    raw = result.raw or result.pet.to_wire()
    return DetailView(pet_id=result.pet.id, fields=pet_fields(raw), notice=notice)


def detail_from_list(pet: Any, *, reason: str) -> DetailView:
    """The list's data for a pet, when getPet cannot be used."""
    return DetailView(pet_id=pet.id, fields=pet_fields(pet.to_wire()), notice=DEPRECATION_NOTE, fallback=reason)


def detail_failed(pet_id: int, failure: Failure) -> DetailView:
    return DetailView(pet_id=pet_id, notice=DEPRECATION_NOTE, failure=failure)


def detail_for_failure(failure: Failure, *, pet_id: int | None, known: Any) -> DetailView | None:
    """After a failed /get: the list's data (getPet gone), a clear 404 view, or nothing."""
    if falls_back(failure, known=known is not None):
        return detail_from_list(known, reason=fallback_reason(failure))
    if failure.kind == "not_found" and pet_id is not None:
        return detail_failed(pet_id, failure)
    return None


def detail_without_request(known: Any, *, today: date) -> DetailView | None:
    """After getPet's sunset, a row's detail comes from the list without asking."""
    if known is not None and getpet_gone(today):
        return detail_from_list(known, reason=fallback_reason(None, sunset=True))
    return None


def fallback_reason(failure: Failure | None, *, sunset: bool = False) -> str:
    if sunset:
        return "getPet was removed on 5 December 2030: showing the data the list already has."
    status = failure.status if failure else None
    return f"getPet answered {status} for a pet the list has (operation gone?): showing the list's data."


def list_failure_state(failure: Failure, line: str) -> str | None:
    """How the pets pane shows a failure: 'problem' (banner + retry), 'idle' or None (untouched)."""
    if command_name(line) in LIST_COMMANDS or failure.kind == "unreachable":
        return "idle" if failure.kind == "usage" else "problem"
    return None


def tab_for_new_pet(pet_status: str, tab_status: str | None) -> str | None:
    """None when a new pet shows in the current tab, else the tab to switch to."""
    if tab_status is None or tab_status == pet_status:
        return None
    return tab_for_status(pet_status)


def get_target(line: str, last_id: int | None) -> int | None:
    """The pet id a ``/get`` line asks for (``$last`` resolved), if readable."""
    words = line.split()
    if len(words) < 2:
        return None
    word = words[1]
    if word.lower() == "$last":
        return last_id
    try:
        return int(word)
    except ValueError:
        return None


# --------------------------------------------------------------------------- paging


def is_more(line: str) -> bool:
    return command_name(line) == "more"
