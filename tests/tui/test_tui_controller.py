"""The TUI's decision logic, without widgets."""

from __future__ import annotations

import shlex
from datetime import date

import pytest

from bot_commands.errors import Declined, UsageError
from bot_commands.session import CommandSession
from petstore_api import errors as e
from petstore_api.models import ErrorBody, Pet
from tui import controller as c
from tui.render import clip, is_flat_records, literal, pet_row, record_columns
from tui.validation import FormValues, category_error, form_errors, name_error, parse_form
from tui.widgets.chat_pane import complete_line


def test_list_and_add_lines_parse_back_in_the_command_layer() -> None:
    assert c.list_line(None, 20) == "/list --limit 20"
    assert c.list_line("sold", 500) == "/list sold --limit 100"
    session = CommandSession(client=None, env=None)  # parse only: nothing is sent
    for name in ["Rex", "Rex the Dog", "it's [b]x[/b]", "-dash", "name=odd", 'q"uote']:
        line = c.add_line(name=name, category_id=3, status="sold")
        values = session.parse(line).values
        assert (values["name"], values["category"], values["status"]) == (name, 3, "sold")
    assert c.add_line(name="Rex", category_id=1, status=None) == "/add Rex --category 1"


def test_page_size_steps_and_clamps() -> None:
    assert c.step_page_size(20, 1) == 50
    assert c.step_page_size(20, -1) == 10
    assert c.step_page_size(100, 1) == 100
    assert c.step_page_size(1, -1) == 1
    assert c.step_page_size(7, 1) == 10
    assert c.clamp_page_size(0) == 1


def test_freshness_drops_older_answers() -> None:
    fresh = c.Freshness()
    assert fresh.accept("list", 2)
    assert not fresh.accept("list", 1)
    assert fresh.accept("detail", 1)
    assert fresh.accept("list", 3)


def test_worker_groups() -> None:
    assert c.worker_group("/list sold") == ("list", True)
    assert c.worker_group("ls") == ("list", True)
    assert c.worker_group("/get 3") == ("detail", True)
    assert c.worker_group("/add Rex --category 1") == ("command", False)


@pytest.mark.parametrize(
    ("exc", "kind", "exit_code"),
    [
        (UsageError("missing NAME", usage="/add NAME"), "usage", 2),
        (Declined("not done"), "declined", 2),
        (e.AuthenticationError(ErrorBody(code="unauthorized", message="bad key", status=401)), "auth", 1),
        (e.NotFoundError(ErrorBody(code="not_found", message="no pet", status=404)), "not_found", 1),
        (e.APIError(ErrorBody(code="gone", message="gone", status=410)), "gone", 1),
        (e.ConnectError("refused"), "unreachable", 1),
        (e.InputError("limit"), "usage", 2),
        (RuntimeError("boom"), "error", 1),
    ],
)
def test_classify(exc: BaseException, kind: str, exit_code: int) -> None:
    failure = c.classify(exc)
    assert (failure.kind, failure.exit_code) == (kind, exit_code)
    assert failure.title


def test_detail_decisions() -> None:
    assert c.getpet_gone(date(2030, 12, 5)) and not c.getpet_gone(date(2030, 12, 4))
    gone = c.Failure("gone", "x", status=410)
    assert c.falls_back(gone, known=True)
    assert not c.falls_back(gone, known=False)
    assert not c.falls_back(c.Failure("unreachable", "x"), known=True)
    assert c.get_target("/get 7", None) == 7
    assert c.get_target("/get $last", 4) == 4
    assert c.get_target("/get", 4) is None


def test_pet_fields_put_known_fields_first_and_keep_extras() -> None:
    fields = c.pet_fields({"tag": {"a": 1}, "status": "sold", "name": "Rex", "id": 1, "categoryId": 2})
    assert fields == [("id", "1"), ("name", "Rex"), ("categoryId", "2"), ("status", "sold"), ("tag", '{"a": 1}')]


def test_form_validation_mirrors_the_service() -> None:
    assert name_error("") and name_error("   ")
    assert name_error("x" * 201) and not name_error("x" * 200)
    assert category_error("abc") and category_error("") and category_error(str(2**63))
    assert not category_error(str(-(2**63)))
    assert form_errors(name="Rex", category="3", status=None) == {}
    assert set(form_errors(name="", category="x", status="gone")) == {"name", "category", "status"}
    assert parse_form(name="Rex", category=" 3 ", status="") == FormValues(name="Rex", category_id=3, status=None)


def test_server_text_is_literal_and_clipped() -> None:
    text = literal("[b]x[/b]\x1b[31m")
    assert text.plain == "[b]x[/b]␛[31m"
    assert not text.spans
    pet = Pet.model_validate({"id": 1, "name": "n" * 10_000, "categoryId": 2, "status": "weird"})
    cells = pet_row(pet)
    assert len(cells[1].plain) == 40 and cells[1].plain.endswith("…")
    assert cells[3].plain == "weird"
    assert clip("abc", 2) == "a…"


def test_generic_rendering_choice() -> None:
    assert is_flat_records([{"id": 1, "qty": 2}, {"id": 2, "note": None}])
    assert not is_flat_records([{"id": 1, "items": [1]}])
    assert not is_flat_records({"orders": []})
    assert not is_flat_records([])
    assert record_columns([{"a": 1}, {"b": 2, "a": 3}]) == ["a", "b"]


def test_completion_extends_lines_or_last_words() -> None:
    assert complete_line("/li", ["/list", "/ls"]) == "/list"
    assert complete_line("/list so", ["sold"]) == "/list sold"
    assert complete_line("/list sold", ["/list sold"]) is None
    assert complete_line("/x", []) is None


def test_add_line_is_shell_quoted() -> None:
    assert shlex.split(c.add_line(name="a b", category_id=1, status=None))[1] == "a b"


def test_failure_and_placement_decisions() -> None:
    usage, down = c.Failure("usage", "x"), c.Failure("unreachable", "x")
    assert c.list_failure_state(usage, "/list --limit 0") == "idle"
    assert c.list_failure_state(down, "/get 3") == "problem"
    assert c.list_failure_state(c.Failure("not_found", "x", status=404), "/get 3") is None
    assert c.list_failure_state(c.Failure("protocol", "x"), "/more") == "problem"
    assert c.tab_for_new_pet("sold", None) is None
    assert c.tab_for_new_pet("sold", "sold") is None
    assert c.tab_for_new_pet("sold", "pending") == "sold"
    assert c.tab_for_new_pet("", "pending") == "all"
    assert c.worker_group("/more") == ("list", True)


def test_detail_views_for_failures_and_sunset() -> None:
    pet = Pet.model_validate({"id": 4, "name": "Goldie", "categoryId": 4, "status": "sold"})
    not_found = c.Failure("not_found", "no pet", status=404)
    assert c.detail_for_failure(not_found, pet_id=9, known=None).failure is not_found
    fallback = c.detail_for_failure(not_found, pet_id=4, known=pet)
    assert fallback.fallback and ("name", "Goldie") in fallback.fields
    assert c.detail_for_failure(c.Failure("unreachable", "x"), pet_id=4, known=pet) is None
    assert c.detail_without_request(pet, today=date(2030, 12, 4)) is None
    assert "removed" in c.detail_without_request(pet, today=date(2031, 1, 1)).fallback
    assert c.detail_without_request(None, today=date(2031, 1, 1)) is None




def test_command_names_come_from_the_registry() -> None:
    assert c.command_name("ls sold") == "list" and c.command_name("//list") == "list"
    assert c.command_name("/next") == "more" and c.worker_group("/next") == ("list", True)
    assert c.command_name("/get 3") == "get" and c.worker_group("get 3") == ("detail", True)
    assert c.command_name("/bogus") == "" and c.worker_group("/add x --category 1") == ("command", False)


def test_pet_fields_show_every_field_and_an_absent_status() -> None:
    assert c.pet_fields({"id": 1, "name": "Rex", "categoryId": 2, "colour": "brown"}) == [
        ("id", "1"), ("name", "Rex"), ("categoryId", "2"), ("status", "(not set)"), ("colour", "brown"),
    ]
    assert c.pet_fields({"id": 1, "name": "Rex", "categoryId": 2, "status": "adopted"})[-1] == ("status", "adopted")
