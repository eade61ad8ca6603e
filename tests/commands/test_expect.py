"""/expect: what holds, and what a failure says differed."""

from __future__ import annotations

from datetime import date

import pytest

from bot_commands.errors import ExpectationFailed, UsageError, classify
from bot_commands.expect import evaluate
from bot_commands.outcome import Outcome
from bot_commands.results import Help, OrdersListing, PetCreated, PetDetail, PetList
from petstore_api.errors import ConnectError, NotFoundError
from petstore_api.models import DeprecationNotice, ErrorBody, Pet


def pet(pid: int, name: str = "Rex", status: str | None = "available") -> Pet:
    data = {"id": pid, "name": name, "categoryId": 1}
    if status is not None:
        data["status"] = status
    return Pet.model_validate(data)


def ok(result: object) -> Outcome:
    return Outcome(line="/x", result=result)  # type: ignore[arg-type]


LIST = ok(PetList(pets=[pet(1, "Rex"), pet(2, "Tom", "sold")]))
DETAIL = ok(PetDetail(pet=pet(3, "Tweety", "pending"), notice=DeprecationNotice("getPet", date(2030, 12, 5))))
NOT_FOUND = Outcome(
    line="/get 9", failure=classify(NotFoundError(ErrorBody(code="not_found", message="no pet", status=404)))
)
USAGE = Outcome(line="/list --limit 0", failure=classify(UsageError("limit", usage="/list")))


@pytest.mark.parametrize(
    ("kind", "value", "outcome"),
    [
        ("ok", None, LIST),
        ("count", 2, LIST),
        ("count", 0, ok(OrdersListing(data=[]))),
        ("name", "Tom", LIST),
        ("name", "Tweety", DETAIL),
        ("status", "pending", DETAIL),
        ("status", "sold", ok(PetList(pets=[pet(2, status="sold")]))),
        ("status", "adopted", ok(PetCreated(pet=pet(5, status="adopted")))),
        ("error", None, NOT_FOUND),
        ("error", "404", NOT_FOUND),
        ("error", "not_found", NOT_FOUND),
        ("error", "usage", USAGE),
        ("error", "connect", Outcome(line="/list", failure=classify(ConnectError("refused")))),
    ],
)
def test_expectations_that_hold(kind: str, value: object, outcome: Outcome) -> None:
    assert evaluate(kind, value, outcome).startswith(kind)


@pytest.mark.parametrize(
    ("kind", "value", "outcome", "differs"),
    [
        ("ok", None, None, "got no previous command to check"),
        ("ok", None, NOT_FOUND, "got an error (404 not_found): no pet"),
        ("count", 3, LIST, "expected count 3, got count 2"),
        ("count", 1, DETAIL, "has no count"),
        ("count", 1, ok(Help(entries=())), "a Help, which has no count"),
        ("status", "available", LIST, "expected every pet status available, got 1 of 2 not available: 2 (sold)"),
        ("status", "sold", ok(PetList(pets=[])), "got no pets"),
        ("status", "sold", DETAIL, "got status pending (pet 3)"),
        ("status", "sold", ok(PetCreated(pet=pet(5, status=None))), "got status (none)"),
        ("name", "Max", LIST, "expected a pet named 'Max', got none among 2 pets"),
        ("name", "Max", DETAIL, "got name 'Tweety'"),
        ("error", None, LIST, "expected error, got success (2 pets)"),
        ("error", "400", NOT_FOUND, "expected error 400, got error 404 not_found"),
        ("error", "usage", NOT_FOUND, "got error 404 not_found"),
    ],
)
def test_failed_expectations_say_what_differed(kind: str, value: object, outcome: Outcome | None, differs: str) -> None:
    with pytest.raises(ExpectationFailed) as info:
        evaluate(kind, value, outcome)
    assert differs in str(info.value)
    failure = classify(info.value)
    assert failure.exit_code == 1 and failure.kind == failure.code == "expectation_failed"


def test_names_with_control_characters_are_shown_visibly() -> None:
    with pytest.raises(ExpectationFailed) as info:
        evaluate("name", "Rex", ok(PetCreated(pet=pet(1, "\x1b[2J"))))
    assert "\x1b" not in str(info.value) and "\u241b[2J" in str(info.value)
