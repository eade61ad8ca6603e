"""Rendering for line terminals: hostile service text is shown literally and never escapes."""

from __future__ import annotations

import io
from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from bot_commands.commands import default_registry
from bot_commands.errors import ExpectationFailed, UsageError, classify
from bot_commands.render import render
from bot_commands.results import (
    EnvInfo,
    ExpectationMet,
    HistoryListing,
    Notice,
    OrdersListing,
    Paused,
    PetCreated,
    PetDetail,
    PetList,
    Quit,
)
from bot_commands.sanitize import clip, visible
from bot_commands.views import present, present_failure, with_prefix
from petstore_api.errors import AuthenticationError, ConnectError, NotFoundError
from petstore_api.models import DeprecationNotice, ErrorBody, Pet

REGISTRY = default_registry()


def notices(result: object) -> list[str]:
    return list(present(result).notes)  # type: ignore[arg-type]


def error_message(exc: BaseException) -> str:
    return classify(exc).text


HOSTILE = [
    "[b]bold[/b] [red]x[/red]",
    "\x1b[31mred\x1b[0m",
    "\x1b]0;pwned\x07title",
    "\x9b2J",
    "null\x00bell\x07del\x7f",
    "abc\u202edcba\u2066x\u2069",
    "line\nbreak\rreturn\ttab",
    "emoji \U0001f436\u200d\U0001f9ba e\u0301",
    "x" * 10_000,
]


def pet(pid: int, name: str, status: str | None = "available", **extra: object) -> Pet:
    return Pet.model_validate({"id": pid, "name": name, "categoryId": 1, "status": status, **extra})


def draw(renderable: object, *, terminal: bool = False) -> str:
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=terminal, color_system="standard" if terminal else None)
    console.print(renderable)
    return out.getvalue()


def assert_safe(text: str) -> None:
    forbidden = [chr(c) for c in range(0x20) if c != 0x0A] + ["\x7f"] + [chr(c) for c in range(0x80, 0xA0)]
    forbidden += ["\u202e", "\u2066", "\u2069"]
    assert not [c for c in forbidden if c in text]


def test_hostile_names_in_a_table_are_literal_and_safe() -> None:
    result = PetList(pets=[pet(i, name) for i, name in enumerate(HOSTILE, start=1)])
    text = draw(render(result))
    assert_safe(text)
    assert "[b]bold[/b] [red]x[/red]" in text
    assert "\u241b[31mred\u241b[0m" in text and "\\x9b2J" in text and "<U+202E>" in text
    assert "\U0001f436\u200d\U0001f9ba" in text and "e\u0301" in text
    assert "x" * 59 + "…" in text and "x" * 61 not in text
    assert all(len(line) <= 100 for line in text.splitlines())
    assert "9 pets" in text


def test_on_a_terminal_no_escape_from_data_gets_through() -> None:
    result = PetList(pets=[pet(1, "\x1b]0;pwned\x07title"), pet(2, "\x1b[2J")])
    text = draw(render(result), terminal=True)
    assert "\x1b]" not in text and "\x07" not in text and "\x1b[2J" not in text


def test_a_pet_card_shows_every_field_literally() -> None:
    created = PetCreated(pet=pet(7, "[i]Rex[/i]", "adopted", color="\x1b[1mbrown", tags=["a", "b"]))
    text = draw(render(created))
    assert_safe(text)
    assert "Added pet 7" in text and "[i]Rex[/i]" in text and "adopted" in text
    assert "color" in text and "\u241b[1mbrown" in text and '["a", "b"]' in text


def test_unknown_status_is_shown_as_it_came_and_dimmed() -> None:
    console = Console(width=80, force_terminal=True)
    segments = list(console.render(render(PetList(pets=[pet(1, "Rex", "adopted")]))))
    status = [s for s in segments if "adopted" in s.text]
    assert status and status[0].style is not None and status[0].style.dim


def test_detail_and_its_deprecation_notice_once() -> None:
    notice = DeprecationNotice(operation="getPet", sunset=date(2030, 12, 5))
    first = PetDetail(pet=pet(3, "Tweety"), notice=notice, first_notice=True)
    later = PetDetail(pet=pet(3, "Tweety"), notice=notice, first_notice=False)
    assert "Pet 3" in draw(render(first))
    assert notices(first) == [
        "note: getPet is deprecated and will be removed on 5 December 2030; "
        "use listPets (GET /pets) with a status filter instead."
    ]
    assert notices(later) == [] and notices(Quit()) == []


def test_empty_list_says_so() -> None:
    assert "no pets with status sold" in draw(render(PetList(pets=[], status="sold")))
    more = draw(render(PetList(pets=[pet(1, "Rex")], next_url="http://x/v1/pets?cursor=1")))
    assert "1 pet;" in more and "/list --all" in more


def test_orders_are_rendered_generically() -> None:
    flat = [{"id": 1, "petId": 3, "status": "placed"}, {"id": 2, "complete": True, "note": "[b]x\x1b"}]
    table = draw(render(OrdersListing(data=flat)))
    header = table.splitlines()[0]
    assert all(k in header for k in ("id", "petId", "status", "complete", "note"))
    assert "placed" in table and "[b]x\u241b" in table
    nested = draw(render(OrdersListing(data={"orders": [{"id": 1, "items": [1, 2]}], "x": "\x1b[5m\x9b\u202e"})))
    assert '"orders": [' in nested and '"items": [' in nested
    assert '"x": "\\u001b[5m\\x9b<U+202E>"' in nested
    assert_safe(nested)
    assert "no orders" in draw(render(OrdersListing(data=[])))
    assert "42" in draw(render(OrdersListing(data=42)))


def test_help_shows_usage_lines_literally() -> None:
    text = draw(render(REGISTRY.help()))
    for cmd in REGISTRY.commands():
        assert cmd.usage in text
    assert "/history [save FILE]" in text
    detail = draw(render(REGISTRY.help(REGISTRY.resolve("add"))))
    assert "/add NAME --category ID [--status S]" in detail and "key=value" in detail


def test_env_notice_history_expectation_and_silent_results() -> None:
    env = draw(render(EnvInfo(env="production", base_url="https://p/v1", masked_key="sk-...abcd", read_only=True)))
    assert "production" in env and "sk-...abcd" in env and "yes" in env
    assert "saved \u241b" in draw(render(Notice(text="saved \x1b")))
    assert "✓ expect count 3" in draw(render(ExpectationMet(expectation="count 3")))
    assert "/list\n/get 3" in draw(render(HistoryListing(lines=("/list", "/get 3"))))
    assert render(Paused(seconds=1)) is None and render(Quit()) is None


@pytest.mark.parametrize(
    ("exc", "line"),
    [
        (
            NotFoundError(ErrorBody(code="not_found", message="no pet \x1b[31m", status=404)),
            "error: no pet \u241b[31m (HTTP 404, not_found)",
        ),
        (UsageError("limit too big", usage="/list [--limit N]"), "limit too big. Usage: /list [--limit N]"),
        (ExpectationFailed(expected="count 3", actual="count 2"), "expectation failed: expected count 3, got count 2"),
        (
            ConnectError("cannot connect to 127.0.0.1:9"),
            "error: cannot connect to 127.0.0.1:9. Is the service running? Check the base URL (--base-url or PETSTORE_BASE_URL).",
        ),
        (
            AuthenticationError(ErrorBody(code="unauthorized", message="invalid API key", status=401)),
            "error: invalid API key (HTTP 401, unauthorized). Check the API key: PETSTORE_API_KEY, api_key in the config file, or the key petstore auth login stored.",
        ),
        (KeyError("boom"), "internal error: KeyError: 'boom'"),
    ],
)
def test_error_messages_are_one_safe_line(exc: BaseException, line: str) -> None:
    assert error_message(exc) == line


@given(st.text())
def test_visible_leaves_nothing_dangerous(text: str) -> None:
    shown = visible(text)
    assert_safe(shown)
    assert "\n" not in shown
    assert visible(text, keep_newlines=True).count("\n") == text.count("\n")


def test_visible_keeps_printable_text_and_newlines_on_request() -> None:
    assert visible("Rex 🐶 é") == "Rex 🐶 é"
    assert visible("a\nb") == "a\u240ab" and visible("a\nb", keep_newlines=True) == "a\nb"
    assert visible("\x1b\x00\x7f\x85\u202e\u2028") == "\u241b\u2400\u2421\\x85<U+202E><U+2028>"
    assert clip("abcdef", 4) == "abc…" and clip("abc", 4) == "abc" and clip("abc", 0) == ""


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "unknown command /lsit; did you mean /list? /help lists the commands",
            "unknown command /lsit; did you mean !list? !help lists the commands",
        ),  # /lsit is no command
        ("/add needs the operator role", "!add needs the operator role"),
        ("(see /help)", "(see !help)"),
        (
            "GET /v1/pets failed; see http://host/list or /tmp/list.log",
            "GET /v1/pets failed; see http://host/list or /tmp/list.log",
        ),  # paths and addresses stay
        ("a pet named x/list or /listing", "a pet named x/list or /listing"),
    ],
)
def test_a_failure_names_commands_as_the_face_types_them(text: str, shown: str) -> None:
    assert with_prefix(text, prefix="!", commands={"list", "help", "add"}) == shown
    assert with_prefix(text, prefix="/", commands={"list", "help", "add"}) == text
    assert with_prefix(text, prefix="!", commands=()) == text


def test_slack_failures_name_commands_after_the_slash_command() -> None:
    failure = classify(UsageError("unknown command /lsit; /help lists the commands"))
    shown = present_failure(failure, prefix="/pets ", commands={"help", "lsit"})
    assert shown.summary == "unknown command /pets lsit; /pets help lists the commands"
