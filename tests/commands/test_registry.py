"""The registry: every command declared once; parsing, usage, help and did-you-mean derived from it."""

from __future__ import annotations

import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_commands.arguments import NoParams, option, positional, switch
from bot_commands.commands import GetParams, ListParams, default_registry
from bot_commands.errors import UsageError, classify
from bot_commands.registry import Registry, TypedCommand, command
from bot_commands.results import Notice
from petstore_os.records import fields, record

REGISTRY = default_registry()

NAMES = [
    "list",
    "more",
    "add",
    "get",
    "orders",
    "env",
    "whoami",
    "help",
    "confirm",
    "cancel",
    "approve",
    "deny",
    "audit",
    "watch",
    "unwatch",
    "watches",
    "every",
    "schedules",
    "unschedule",
    "history",
    "sleep",
    "expect",
    "quit",
]


def parse(line: str) -> dict[str, Any]:
    params = REGISTRY.parse(line).params
    return {each.name: getattr(params, each.name) for each in fields(params)}


def test_every_command_is_declared_once_with_usage_and_summary() -> None:
    assert [c.name for c in REGISTRY.commands()] == NAMES
    for cmd in REGISTRY.commands():
        assert cmd.usage.startswith(f"/{cmd.name}") and cmd.summary
    assert REGISTRY.get("ls").name == "list" and REGISTRY.get("/exit").name == "quit"


def test_usage_lines_come_from_the_declaration() -> None:
    assert REGISTRY.get("list").usage == "/list [STATUS] [--status S] [--limit N] [--all]"
    assert REGISTRY.get("add").usage == "/add NAME --category ID [--status S]"
    assert REGISTRY.get("get").usage == "/get ID"


@pytest.mark.parametrize(
    ("line", "values"),
    [
        ("/list", {"status": None, "limit": None, "all": False}),
        ("/list sold", {"status": "sold", "limit": None, "all": False}),
        ("list --status Pending --limit 5", {"status": "pending", "limit": 5, "all": False}),
        ("/ls --limit=100 --all available", {"status": "available", "limit": 100, "all": True}),
        ("/list status=sold limit=1", {"status": "sold", "limit": 1, "all": False}),
        ("/list sold --status sold", {"status": "sold", "limit": None, "all": False}),
        ("/list \u2014limit 7", {"status": None, "limit": 7, "all": False}),
    ],
)
def test_list_arguments(line: str, values: dict[str, Any]) -> None:
    assert parse(line) == values


@pytest.mark.parametrize(
    "line",
    [
        '/add "Rex the Dog" --category 3 --status available',
        "/add Rex the Dog --category 3 --status available",
        '/add name="Rex the Dog" categoryId=3 status=available',
        "/add name='Rex the Dog' category=3 status=AVAILABLE",
        '/add --category=3 --status available -- "Rex the Dog"',
        "add \u201cRex the Dog\u201d category_id=3 \u2014status available",
    ],
)
def test_add_forms(line: str) -> None:
    assert parse(line) == {"name": "Rex the Dog", "category": 3, "status": "available"}


def test_add_without_status_and_negative_category() -> None:
    assert parse("/add Rex --category -4") == {"name": "Rex", "category": -4, "status": None}


@pytest.mark.parametrize(
    ("line", "values"),
    [
        ("/get 3", {"id": 3}),
        ("/get 9223372036854775807", {"id": 2**63 - 1}),
        ("/get -9223372036854775808", {"id": -(2**63)}),
        ("/help", {"topic": None}),
        ("/help ls", {"topic": "ls"}),
        ("/help /add", {"topic": "add"}),
        ("/sleep 0.5", {"seconds": 0.5}),
        ("/sleep 60", {"seconds": 60.0}),
        ("/expect count 3", {"what": "count", "value": 3}),
        ("/expect ok", {"what": "ok", "value": None}),
        ('/expect name "Rex the Dog"', {"what": "name", "value": "Rex the Dog"}),
        ("/expect status SOLD", {"what": "status", "value": "sold"}),
        ("/expect error 404", {"what": "error", "value": "404"}),
        ("/expect error", {"what": "error", "value": None}),
        ("/history", {"action": None, "file": None}),
        ("/history save demo.txt", {"action": "save", "file": "demo.txt"}),
        ("/orders", {}),
        ("/env", {}),
        ("/quit", {}),
        ("exit", {}),
    ],
)
def test_other_commands(line: str, values: dict[str, Any]) -> None:
    assert parse(line) == values


# Every bad-input case of issue 4, plus a few more: one line, what is wrong, and the usage line.
BAD = [
    ("/lst", "unknown command /lst; did you mean /list?", None),
    ("/lsit sold", "did you mean /list?", None),
    ("/frobnicate", "unknown command /frobnicate; /help lists the commands", None),
    ('/add "Rex --category 3', "unclosed quote", "add"),
    ("/nope 'x", "unclosed quote", None),
    ("/list --limit 0", "limit must be a whole number from 1 to 100, not '0'", "list"),
    ("/list --limit 101", "not '101'", "list"),
    ("/list --limit abc", "not 'abc'", "list"),
    ("/list --limit", "--limit needs a value (N)", "list"),
    ("/list --limit --all", "--limit needs a value", "list"),
    ("/list adopted", "unknown status 'adopted'; use one of available, pending, sold", "list"),
    ("/list --status availabel", "did you mean available?", "list"),
    ("/list --stauts sold", "unknown option --stauts (did you mean --status?)", "list"),
    ("/list -l 5", "unknown option -l", "list"),
    ("/list sold --status pending", "status given twice", "list"),
    ("/list sold extra", "unexpected argument 'extra'", "list"),
    ("/list --all=yes", "--all takes no value", "list"),
    ("/add --category 3", "missing NAME", "add"),
    ("/add Rex", "missing --category", "add"),
    ('/add "" --category 3', "the name must not be blank", "add"),
    ("/add Rex --category three", "category id must be a whole number, not 'three'", "add"),
    ("/add Rex --category 9223372036854775808", "outside the int64 range", "add"),
    ("/add Rex --category 3 --status lost", "unknown status 'lost'", "add"),
    ("/add " + "x" * 201 + " --category 3", "at most 200 are allowed", "add"),
    ("/get", "missing ID", "get"),
    ("/get abc", "pet id must be a whole number, not 'abc'", "get"),
    ("/get 9223372036854775808", "pet id 9223372036854775808 is outside the int64 range", "get"),
    ("/get -9223372036854775809", "outside the int64 range", "get"),
    ("/get " + "9" * 5000, "outside the int64 range", "get"),
    ("/get 1.5", "whole number", "get"),
    ("/get \u0661\u0662", "whole number", "get"),
    ("/get 1 2", "unexpected argument '2'", "get"),
    ("/orders now", "unexpected argument 'now'", "orders"),
    ("/sleep", "missing SECONDS", "sleep"),
    ("/sleep 61", "seconds must be a number from 0 to 60", "sleep"),
    ("/sleep -1", "seconds must be a number from 0 to 60", "sleep"),
    ("/sleep nan", "seconds must be a number from 0 to 60", "sleep"),
    ("/sleep inf", "seconds must be a number from 0 to 60", "sleep"),
    ("/expect", "missing WHAT", "expect"),
    ("/expect cuont 3", "cannot expect 'cuont' (did you mean count?)", "expect"),
    ("/expect count", "/expect count needs a value", "expect"),
    ("/expect count many", "count must be a whole number", "expect"),
    ("/expect ok 3", "/expect ok takes no value", "expect"),
    ("/expect error 404 500", "error takes one HTTP status or code", "expect"),
    ("/history load x", "unknown /history action 'load'", "history"),
    ("/history save", "/history save needs a FILE", "history"),
]


@pytest.mark.parametrize(("line", "problem", "command"), BAD, ids=[b[0][:30] for b in BAD])
def test_bad_input_is_one_line_with_the_usage(line: str, problem: str, command: str | None) -> None:
    with pytest.raises(UsageError) as info:
        REGISTRY.parse(line)
    message = str(info.value)
    assert problem in message
    assert "\n" not in message and len(message) < 400
    assert info.value.command == command
    if command is not None:
        usage = REGISTRY.get(command).usage
        assert info.value.usage == usage and message.endswith(f"Usage: {usage}")


def test_control_characters_in_bad_input_are_shown_visibly() -> None:
    with pytest.raises(UsageError) as info:
        REGISTRY.parse("/list \x1b[31mred\x9b")
    assert "\x1b" not in str(info.value) and "\x9b" not in str(info.value)
    assert "\u241b[31mred\\x9b" in str(info.value)


def test_help_comes_from_the_registry() -> None:
    everything = REGISTRY.help()
    assert [e.name for e in everything.entries] == [f"/{n}" for n in NAMES]
    one = REGISTRY.help(REGISTRY.resolve("ls"))
    assert one.topic == "/list" and one.entries[0].aliases == ("/ls",)
    assert "--limit N" in one.entries[0].details and "1 to 100" in one.entries[0].details


@record(kw_only=True)
class GreetParams:
    who: str = positional("WHO", str, required=True)
    times: int | None = option("--times", "N", int)
    loud: bool = switch("--loud")


async def greet_handler(context: Any, params: GreetParams) -> Notice:
    return Notice(text=f"hello {params.who}")


def test_a_new_registry_derives_everything_from_one_declaration() -> None:
    greet = command("greet", params=GreetParams, aliases=("hi",), summary="Say hello")(greet_handler)
    reg = Registry([greet])
    assert reg.get("hi").usage == "/greet WHO [--times N] [--loud]"
    assert reg.parse("hi Ann --loud").params == GreetParams(who="Ann", loud=True)
    assert reg.parse("hi Ann --times 2").params == GreetParams(who="Ann", times=2)
    with pytest.raises(UsageError, match="did you mean /greet"):
        reg.parse("/gret Ann")
    again = command("hi", params=GreetParams, summary="again")(greet.handler)
    with pytest.raises(ValueError, match="declared twice"):
        Registry([greet, again])


def test_a_parameter_field_without_an_argument_declaration_is_refused() -> None:
    @record
    class Loose:
        who: str = "x"

    async def handler(context: Any, params: Loose) -> Notice:
        return Notice(text=params.who)

    with pytest.raises(TypeError, match=r"Loose\.who is not declared"):
        command("loose", params=Loose, summary="x")(handler)


async def test_a_handler_gets_only_its_own_parameter_type() -> None:
    get = REGISTRY.resolve("get")
    assert isinstance(get, TypedCommand) and get.params is GetParams
    with pytest.raises(TypeError, match="/get takes GetParams, not ListParams"):
        await get.perform(None, ListParams())  # no context needed: refused before the handler runs


#: A line for every command, with every argument given (for the type check below).
EVERY_ARGUMENT = [
    "/list sold --limit 5 --all",
    "/more",
    "/add Rex --category 3 --status sold",
    "/get 7",
    "/orders",
    "/env",
    "/whoami",
    "/help list",
    "/confirm ABCD",
    "/cancel ABCD",
    "/approve ABCD23",
    "/deny ABCD23 not on a friday",
    "/audit 20",
    "/watch available",
    "/unwatch",
    "/watches",
    "/every weekday at 09:00 /list pending",
    "/schedules",
    "/unschedule 3",
    "/history save demo.pets",
    "/sleep 0.5",
    "/expect count 3",
    "/expect status sold",
    "/quit",
]


def test_every_command_is_exercised_by_a_line() -> None:
    assert {REGISTRY.parse(line).command.name for line in EVERY_ARGUMENT} == set(NAMES)


@pytest.mark.parametrize("line", EVERY_ARGUMENT)
def test_parsed_values_have_the_types_their_fields_declare(line: str) -> None:
    invocation = REGISTRY.parse(line)
    cmd = invocation.command
    assert isinstance(cmd, TypedCommand) and type(invocation.params) is cmd.params
    hints = typing.get_type_hints(cmd.params)
    assert {a.dest for a in cmd.args} == set(hints)
    for name, declared in hints.items():
        value = getattr(invocation.params, name)
        assert isinstance(value, declared), f"{cmd.name}.{name} = {value!r} is not {declared}"
    if cmd.params is NoParams:
        assert cmd.args == ()


WORDS = st.sampled_from(
    [
        "/list",
        "list",
        "/add",
        "/get",
        "/expect",
        "/history",
        "/sleep",
        "/help",
        "--limit",
        "--status",
        "--all",
        "--category",
        "sold",
        "name=",
        "categoryId=",
        "$last",
        '"',
        "'",
        "\u201c",
        "\u2014",
        "--",
        "-",
        "=",
        "save",
    ]
)
LINES = st.one_of(
    st.text(max_size=120),
    st.lists(st.one_of(WORDS, st.text(max_size=12)), max_size=8).map(" ".join),
)


@settings(max_examples=400)
@given(LINES)
def test_parse_never_raises_anything_but_usage_error(line: str) -> None:
    try:
        invocation = REGISTRY.parse(line)
    except UsageError as exc:
        text = str(exc)
        assert "\n" not in text and "\x1b" not in text
        assert classify(exc).kind == "usage"
    else:
        assert invocation.command in REGISTRY.commands()
