"""UI decisions of the TUI, free of widgets so they are testable on their own.

Every action of the TUI becomes a slash-command line (built here with the
command layer's :func:`join_command`), is run by the session, and comes back as
its :class:`~bot_commands.outcome.Outcome` (parsed, classified). Nothing here
parses a line or classifies an error: it decides what the screen does with an
outcome.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from petstore_os.records import record

from .tabs import tab_for_status

if TYPE_CHECKING:  # pragma: no cover
    from bot_commands.errors import Failure
    from bot_commands.outcome import Outcome
    from bot_commands.results import PetDetail

# Light: the main screen imports this module before the libraries (the first frame); the
# command layer's limits and dates (pydantic models), its parser and json are imported where they
# are used.

#: Page sizes the ``+``/``-`` keys step through.
PAGE_STEPS = (1, 5, 10, 20, 50, 100)


def clamp_page_size(size: int) -> int:
    from bot_commands.validation import LIMIT_MAX, LIMIT_MIN

    return max(LIMIT_MIN, min(LIMIT_MAX, int(size)))


def step_page_size(size: int, direction: int) -> int:
    """The next page size up (+1) or down (-1) from ``size``."""
    from bot_commands.validation import LIMIT_MAX, LIMIT_MIN

    if direction > 0:
        return next((s for s in PAGE_STEPS if s > size), LIMIT_MAX)
    return next((s for s in reversed(PAGE_STEPS) if s < size), LIMIT_MIN)


def _join(name: str, *words: object) -> str:
    """The command layer's :func:`~bot_commands.parser.join_command` (imported on first use: shlex)."""
    from bot_commands.parser import join_command

    return join_command(name, *words)


def list_line(status: str | None, limit: int | None = None) -> str:
    """The ``/list`` line for a tab and page size (None: the command layer's default)."""
    from bot_commands.validation import LIMIT_DEFAULT

    size = clamp_page_size(LIMIT_DEFAULT if limit is None else limit)
    return _join("list", *([status] if status else []), "--limit", size)


def add_line(*, name: str, category_id: int, status: str | None) -> str:
    """The ``/add`` line for the form's values; a name that could read as an option or key=value goes after ``--``."""
    options: list[object] = ["--category", category_id] + (["--status", status] if status else [])
    if name.startswith("-") or "=" in name:
        return _join("add", *options, "--", name)
    return _join("add", name, *options)


def get_line(pet_id: int) -> str:
    return _join("get", pet_id)


#: A command group (declared by the command layer) -> the worker group that runs it.
EXCLUSIVE_GROUPS = frozenset({"listing", "detail"})


def worker_group(group: str | None) -> tuple[str, bool]:
    """(worker group, exclusive) for a command's group: a newer list or detail cancels an older one."""
    return (group, True) if group in EXCLUSIVE_GROUPS else ("command", False)


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
    from bot_commands.validation import SUNSET_DATE

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
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, ensure_ascii=False)


@record(kw_only=True)
class DetailView:
    """What the detail screen shows: fields, or a failure; notes about getPet."""

    pet_id: int
    fields: tuple[tuple[str, str], ...] = ()
    notice: str = ""
    fallback: str = ""
    failure: Failure | None = None


DEPRECATION_NOTE = (
    "getPet is deprecated and will be removed on 5 December 2030; "
    "use listPets (GET /pets) with a status filter instead."
)


def detail_from_result(result: PetDetail) -> DetailView:
    """A /get result as a detail view."""
    notice = result.notice.message or DEPRECATION_NOTE
    raw = result.raw or result.pet.to_wire()
    return DetailView(pet_id=result.pet.id, fields=tuple(pet_fields(raw)), notice=notice)


def detail_from_list(pet: Any, *, reason: str) -> DetailView:
    """The list's data for a pet, when getPet cannot be used."""
    return DetailView(pet_id=pet.id, fields=tuple(pet_fields(pet.to_wire())), notice=DEPRECATION_NOTE, fallback=reason)


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


def list_failure_state(outcome: Outcome) -> str | None:
    """How the pets pane shows a failure: 'problem' (banner + retry), 'idle' or None (untouched)."""
    failure = outcome.failure
    assert failure is not None
    command = outcome.command
    if (command is not None and command.group == "listing") or failure.kind == "unreachable":
        return "idle" if failure.exit_code == 2 else "problem"  # refused before sending: nothing is wrong
    return None


def tab_for_new_pet(pet_status: str, tab_status: str | None) -> str | None:
    """None when a new pet shows in the current tab, else the tab to switch to."""
    if tab_status is None or tab_status == pet_status:
        return None
    return tab_for_status(pet_status)


def get_target(outcome: Outcome) -> int | None:
    """The pet id a ``/get`` asked for (as the command layer parsed it)."""
    from bot_commands.commands import GetParams

    params = outcome.invocation.params if outcome.invocation is not None else None
    return params.id if isinstance(params, GetParams) else None
