"""The TUI's UI decisions (tui/controller.py), and its adapters over the command layer."""

from __future__ import annotations

import shlex
from datetime import date

from bot_commands.commands import AddParams, default_registry
from bot_commands.errors import Failure, classify
from bot_commands.outcome import Outcome
from bot_commands.results import EnvInfo
from bot_commands.sanitize import clip
from bot_commands.session import CommandSession
from petstore_api import errors as e
from petstore_api.models import ErrorBody, Pet, PetStatus
from tui import controller as c
from tui.render import NAME_CELL_WIDTH, literal, pet_row
from tui.validation import FormValues, category_error, form_errors, name_error, parse_form
from tui.widgets.chat_pane import complete_line

ENV = EnvInfo(env="sandbox", base_url="http://x/v1", masked_key="-")
#: Parses only: nothing is sent (no client).
SESSION = CommandSession(client=None, env=ENV, registry=default_registry())  # type: ignore[arg-type]


def api(status: int, code: str = "x") -> Failure:
    return classify(e.api_error_for(status)(ErrorBody(code=code, message="no pet", status=status)))


def failed(line: str, failure: Failure) -> Outcome:
    prepared = SESSION.prepare(line)
    return Outcome(line=prepared.shown, invocation=prepared.invocation, failure=failure)


UNREACHABLE = classify(e.ConnectError("refused"))


def test_list_and_add_lines_parse_back_in_the_command_layer() -> None:
    assert c.list_line(None, 20) == "/list --limit 20"
    assert c.list_line("sold", 500) == "/list sold --limit 100"
    session = SESSION
    for name in ["Rex", "Rex the Dog", "it's [b]x[/b]", "-dash", "name=odd", 'q"uote']:
        line = c.add_line(name=name, category_id=3, status="sold")
        assert session.parse(line).params == AddParams(name=name, category=3, status=PetStatus.SOLD)
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


def test_worker_groups_follow_the_command_layers_groups() -> None:
    def group(line: str) -> tuple[str, bool]:
        command = SESSION.prepare(line).command
        return c.worker_group(command.group if command else None)

    assert group("/list sold") == ("listing", True) and group("ls") == ("listing", True)
    assert group("/next") == ("listing", True) and group("/more") == ("listing", True)
    assert group("/get 3") == ("detail", True)
    assert group("/add Rex --category 1") == ("command", False) and group("/bogus") == ("command", False)


def test_detail_decisions() -> None:
    assert c.getpet_gone(date(2030, 12, 5)) and not c.getpet_gone(date(2030, 12, 4))
    gone = api(410)
    assert gone.kind == "gone" and c.falls_back(gone, known=True)
    assert not c.falls_back(gone, known=False)
    assert not c.falls_back(UNREACHABLE, known=True)
    assert c.get_target(failed("/get 7", gone)) == 7
    assert c.get_target(failed("/get", gone)) is None and c.get_target(failed("/list", gone)) is None


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
    assert len(cells[1].plain) == NAME_CELL_WIDTH and cells[1].plain.endswith("…")
    assert cells[3].plain == "weird"
    assert clip("abc", 2) == "a…"


def test_completion_extends_lines_or_last_words() -> None:
    assert complete_line("/li", ["/list", "/ls"]) == "/list"
    assert complete_line("/list so", ["sold"]) == "/list sold"
    assert complete_line("/list sold", ["/list sold"]) is None
    assert complete_line("/x", []) is None


def test_add_line_is_shell_quoted() -> None:
    assert shlex.split(c.add_line(name="a b", category_id=1, status=None))[1] == "a b"


def test_failure_and_placement_decisions() -> None:
    usage = SESSION.prepare("/list --limit 0")  # never started loading: the pane stays as it is
    assert c.list_failure_state(Outcome(line=usage.shown, failure=usage.failure)) is None
    assert c.list_failure_state(failed("/list", classify(e.InputError("limit")))) == "idle"  # refused, not sent
    assert c.list_failure_state(failed("/get 3", UNREACHABLE)) == "problem"
    assert c.list_failure_state(failed("/get 3", api(404))) is None
    assert c.list_failure_state(failed("/more", classify(e.ProtocolError("html")))) == "problem"
    assert c.tab_for_new_pet("sold", None) is None
    assert c.tab_for_new_pet("sold", "sold") is None
    assert c.tab_for_new_pet("sold", "pending") == "sold"
    assert c.tab_for_new_pet("", "pending") == "all"


def test_detail_views_for_failures_and_sunset() -> None:
    pet = Pet.model_validate({"id": 4, "name": "Goldie", "categoryId": 4, "status": "sold"})
    not_found = api(404)
    assert c.detail_for_failure(not_found, pet_id=9, known=None).failure is not_found
    fallback = c.detail_for_failure(not_found, pet_id=4, known=pet)
    assert fallback.fallback and ("name", "Goldie") in fallback.fields
    assert c.detail_for_failure(UNREACHABLE, pet_id=4, known=pet) is None
    assert c.detail_without_request(pet, today=date(2030, 12, 4)) is None
    assert "removed" in c.detail_without_request(pet, today=date(2031, 1, 1)).fallback
    assert c.detail_without_request(None, today=date(2031, 1, 1)) is None


def test_pet_fields_show_every_field_and_an_absent_status() -> None:
    assert c.pet_fields({"id": 1, "name": "Rex", "categoryId": 2, "colour": "brown"}) == [
        ("id", "1"),
        ("name", "Rex"),
        ("categoryId", "2"),
        ("status", "(not set)"),
        ("colour", "brown"),
    ]
    assert c.pet_fields({"id": 1, "name": "Rex", "categoryId": 2, "status": "adopted"})[-1] == ("status", "adopted")
