"""CommandSession against the real sandbox service (in-process): every command, end to end."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot_commands.errors import (
    CommandError,
    ConfirmationRequired,
    Declined,
    ExpectationFailed,
    NoMorePages,
    ReadOnlyError,
    UsageError,
    classify,
)
from bot_commands.results import (
    EnvInfo,
    ExpectationMet,
    Help,
    HistoryListing,
    Notice,
    OrdersListing,
    Paused,
    PetCreated,
    PetDetail,
    PetList,
    Quit,
)
from bot_commands.script import parse_script
from bot_commands.session import CommandSession
from petstore_api.errors import NotFoundError, PetStoreError

SOLD = [4, 6, 9, 11]


async def test_list_first_page_and_filters(session: CommandSession, transport: Any) -> None:
    page = await session.execute("/list")
    assert isinstance(page, PetList) and len(page.pets) == 12 and page.next_url is None
    assert page.to_json() == page.raw
    assert page.raw[0] == {"id": 1, "name": "Rex", "categoryId": 1, "status": "available"}
    sold = await session.execute("ls sold")
    assert [p.id for p in sold.pets] == SOLD and sold.status == "sold"
    assert "status=sold" in str(transport.requests[-1].url)


async def test_list_limit_and_all_pages(session: CommandSession, transport: Any) -> None:
    first = await session.execute("/list --limit 5")
    assert len(first.pets) == 5 and first.next_url is not None and first.pages == 1
    before = len(transport.requests)
    every = await session.execute("/list --limit 5 --all")
    assert [p.id for p in every.pets] == list(range(1, 13))
    assert every.pages == 3 and every.next_url is None and len(every.raw) == 12
    assert len(transport.requests) - before == 3


async def test_all_stops_after_max_pages(session: CommandSession, monkeypatch: pytest.MonkeyPatch) -> None:
    from bot_commands import commands

    monkeypatch.setattr(commands, "MAX_PAGES", 2)
    result = await session.execute("/list --limit 2 --all")
    assert result.pages == 2 and len(result.pets) == 4 and result.next_url is not None


async def test_add_get_and_last(session: CommandSession) -> None:
    created = await session.execute('/add name="Rex the Dog" categoryId=3 status=available')
    assert isinstance(created, PetCreated) and created.pet.name == "Rex the Dog" and created.pet.id == 13
    assert created.to_json() == {"id": 13, "name": "Rex the Dog", "categoryId": 3, "status": "available"}
    assert session.last_pet_id == 13
    shown = await session.execute("/get $last")
    assert isinstance(shown, PetDetail) and shown.pet.id == 13 and shown.first_notice
    assert shown.notice.sunset.year == 2030 and "5 December 2030" in shown.notice.message
    again = await session.execute("get 2")
    assert not again.first_notice and session.last_pet_id == 2
    assert session.history == ['/add name="Rex the Dog" categoryId=3 status=available', "/get $last", "get 2"]


async def test_last_before_any_pet_is_a_usage_error(session: CommandSession, transport: Any) -> None:
    with pytest.raises(UsageError, match=r"\$last has no value yet"):
        await session.execute("/get $last")
    assert transport.requests == []


async def test_get_unknown_pet_raises_not_found(session: CommandSession) -> None:
    with pytest.raises(NotFoundError):
        await session.execute("/get 999")
    assert session.last_outcome is not None and not session.last_outcome.ok


async def test_orders_env_help_quit_sleep(session: CommandSession, sleeps: Any) -> None:
    orders = await session.execute("/orders")
    assert isinstance(orders, OrdersListing) and orders.to_json() == []
    env = await session.execute("/env")
    assert isinstance(env, EnvInfo) and env.env == "sandbox" and env.masked_key.startswith("sk-...")
    assert isinstance(await session.execute("/help"), Help)
    assert (await session.execute("help get")).topic == "/get"
    assert isinstance(await session.execute("/quit"), Quit)
    assert isinstance(await session.execute("/exit"), Quit)
    paused = await session.execute("/sleep 1.5")
    assert isinstance(paused, Paused) and sleeps.calls == [1.5]


async def test_env_never_shows_the_key(session: CommandSession, sandbox: Any) -> None:
    env = await session.execute("/env")
    assert sandbox.api_key not in str(env.to_json()) and sandbox.api_key not in repr(env)


BAD_LINES = [
    "/lst",
    "/add 'Rex --category 3",
    "/list --limit 0",
    "/list --limit 101",
    "/list --limit abc",
    "/list adopted",
    "/add --category 3",
    "/add Rex",
    "/get 9223372036854775808",
    "/get -9223372036854775809",
]


@pytest.mark.parametrize("line", BAD_LINES)
async def test_bad_input_sends_nothing(session: CommandSession, transport: Any, line: str) -> None:
    with pytest.raises(UsageError) as info:
        await session.execute(line)
    assert transport.requests == []
    assert "\n" not in str(info.value)
    assert session.history == []


async def test_read_only_refuses_add_before_sending(
    make_session: Callable[..., CommandSession], transport: Any
) -> None:
    session = make_session(read_only=True)
    with pytest.raises(ReadOnlyError, match="refused to add pet 'Rex'") as info:
        await session.execute("/add Rex --category 1")
    assert transport.requests == [] and classify(info.value).exit_code == 2
    assert (await session.execute("/env")).read_only is True
    assert len((await session.execute("/list")).pets) == 12


async def test_production_add_needs_confirmation(make_session: Callable[..., CommandSession], transport: Any) -> None:
    session = make_session(env="production")
    with pytest.raises(ConfirmationRequired, match="--yes"):
        await session.execute("/add Rex --category 1")
    assert transport.requests == []


async def test_production_add_asks_and_respects_the_answer(make_session: Callable[..., CommandSession]) -> None:
    prompts: list[str] = []
    answers = [False, True]

    async def confirm(prompt: str) -> bool:
        prompts.append(prompt)
        return answers.pop(0)

    session = make_session(env="production", confirm=confirm)
    with pytest.raises(Declined):
        await session.execute("/add Rex --category 1")
    created = await session.execute("/add Rex --category 1")
    assert created.pet.id == 13
    assert "PRODUCTION" in prompts[0] and "Rex" in prompts[0]


async def test_non_production_never_asks(make_session: Callable[..., CommandSession]) -> None:
    async def confirm(prompt: str) -> bool:  # pragma: no cover - must not be called
        raise AssertionError(prompt)

    session = make_session(env="staging", confirm=confirm)
    assert (await session.execute("/add Rex --category 1")).pet.id == 13


async def test_expect_checks_the_previous_outcome(session: CommandSession) -> None:
    await session.execute("/list sold")
    met = await session.execute("/expect count 4")
    assert isinstance(met, ExpectationMet) and met.previous == "/list sold"
    assert isinstance(await session.execute("/expect status sold"), ExpectationMet)
    await session.execute("/sleep 0")  # pauses do not replace the outcome
    await session.execute("/expect name Max")
    with pytest.raises(ExpectationFailed, match="expected count 3, got count 4"):
        await session.execute("/expect count 3")
    with pytest.raises(UsageError):
        await session.execute("/expect count x")  # a bad /expect does not replace the outcome either
    await session.execute("/expect ok")


async def test_expect_error_after_a_usage_error(session: CommandSession) -> None:
    with pytest.raises(UsageError):
        await session.execute("/list --limit 0")
    await session.execute("/expect error usage")
    with pytest.raises(ExpectationFailed, match="expected ok, got an error"):
        await session.execute("/expect ok")


async def test_history_lists_and_saves_a_replayable_script(
    session: CommandSession, make_session: Callable[..., CommandSession], tmp_path: Path
) -> None:
    for line in ["/list sold", "/add Rex --category 1", "/get $last", "/get 999", "/get 998", "/expect error 404"]:
        with contextlib.suppress(NotFoundError):
            await session.execute(line)
    with pytest.raises(UsageError):
        await session.execute("/lst")
    listing = await session.execute("/history")
    assert isinstance(listing, HistoryListing)
    assert listing.lines == (
        "/list sold",
        "/add Rex --category 1",
        "/get $last",
        "# failed: /get 999",
        "/get 998",
        "/expect error 404",
    )
    target = tmp_path / "saved.txt"
    notice = await session.execute(f"/history save {target}")
    assert isinstance(notice, Notice) and "saved 6 commands" in notice.text
    replay = make_session()
    for _, line in parse_script(target.read_text()):
        with contextlib.suppress(NotFoundError):
            await replay.execute(line)
    assert replay.history_script_lines() == [line for line in listing.lines if not line.startswith("#")]
    assert len((await replay.execute("/list")).pets) == 14  # both sessions added one pet


async def test_history_save_to_an_unwritable_place_is_one_line(session: CommandSession, tmp_path: Path) -> None:
    from bot_commands.errors import CommandError

    with pytest.raises(CommandError, match="cannot write"):
        await session.execute(f"/history save {tmp_path}/missing/dir/x.txt")


@pytest.mark.parametrize(
    ("given", "offered"),
    [("demo.pets", "demo.pets"), ("../../home/x/.bashrc", ".bashrc"), ("~/", "petstore-history.pets")],
)
async def test_history_save_where_host_files_are_off_hands_the_script_over(
    session: CommandSession, tmp_path: Path, given: str, offered: str
) -> None:
    """A browser session's policy: /history save writes nothing; the script comes back for the face to deliver."""
    from bot_commands.results import HistoryScript
    from petstore_os.records import replace

    session = CommandSession.from_parts(replace(session.parts, policy=replace(session.policy, host_files=False)))
    await session.execute("/list sold")
    out = tmp_path / "out"
    out.mkdir()
    target = out / given
    script = await session.execute(f"/history save {target if given == 'demo.pets' else given}")
    assert isinstance(script, HistoryScript) and script.name == offered and script.count == 1
    assert script.text.splitlines()[1:] == ["/list sold"] and script.text.startswith("# petstore script")
    assert list(out.iterdir()) == []  # nothing written
    assert script.to_json() == {"file": offered, "commands": 1, "written": False}


def test_seen_ids_keep_the_latest_thousand_each_once(session: CommandSession) -> None:
    for start in range(0, 5000, 20):  # like 250 pages of 20
        session._remember(tuple(range(start, start + 20)))
    session._remember(tuple(range(10)))  # seen again
    session._remember((99_999,))
    ids = session.seen_ids
    assert len(ids) == 1000 == len(set(ids))
    assert ids[-11:] == [*range(10), 99_999]
    assert ids[:3] == [4011, 4012, 4013]  # the oldest kept


async def test_seen_ids_and_completion(session: CommandSession) -> None:
    await session.execute("/list --limit 3")
    await session.execute("/get 7")
    assert session.seen_ids == [1, 2, 3, 7]
    assert session.complete("/get ")[:2] == ["/get 7", "/get 3"]
    await session.execute("/get 2")  # seen again: now the most recent, listed once
    assert session.seen_ids == [1, 3, 7, 2]
    assert session.complete("/get ")[:2] == ["/get 2", "/get 7"]
    assert session.complete("/ge") == ["/get"]
    assert session.complete("li") == ["list"]
    assert session.complete("/list --st") == ["/list --status"]
    assert session.complete("/list --status p") == ["/list --status pending"]
    assert session.complete("/list s") == ["/list sold"]
    assert session.complete("/list sold --") == ["/list sold --status", "/list sold --limit", "/list sold --all"]
    assert session.complete("/add Rex status=a") == ["/add Rex status=available"]
    assert session.complete("/expect status ") == [
        "/expect status available",
        "/expect status pending",
        "/expect status sold",
    ]
    assert session.complete("/help hi") == ["/help history"]
    assert session.complete("/nope ") == [] and session.complete('/add "Rex ') == []


LINE_PARTS = st.sampled_from(
    [
        "/list",
        "/add",
        "/get",
        "/orders",
        "/env",
        "/help",
        "/expect",
        "/history",
        "/sleep",
        "count",
        "error",
        "ok",
        "--limit",
        "--status",
        "--all",
        "--category",
        "sold",
        "Rex",
        "3",
        "-1",
        "$last",
        "name=",
        "categoryId=7",
        '"',
    ]
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(st.one_of(st.text(max_size=60), st.lists(st.one_of(LINE_PARTS, st.text(max_size=8)), max_size=6).map(" ".join)))
async def test_execute_raises_only_the_documented_errors(
    session: CommandSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str
) -> None:
    monkeypatch.chdir(tmp_path)  # /history save writes relative to here
    try:
        await session.execute(line)
    except (CommandError, PetStoreError) as exc:
        assert "\n" not in str(exc)


async def test_more_continues_the_last_list_page_by_page(session) -> None:
    first = await session.execute("/list --limit 5")
    assert [p.id for p in first.pets] == [1, 2, 3, 4, 5] and first.next_url
    second = await session.execute("/more")
    assert [p.id for p in second.pets] == [6, 7, 8, 9, 10] and second.limit == 5
    third = await session.execute("next")
    assert [p.id for p in third.pets] == [11, 12] and third.next_url is None
    with pytest.raises(NoMorePages, match="last page"):
        await session.execute("/more")
    sold = await session.execute("/list sold --limit 2")
    more_sold = await session.execute("/more")
    assert {p.status_text for p in [*sold.pets, *more_sold.pets]} == {"sold"}


async def test_more_before_any_list_says_what_to_do(session) -> None:
    with pytest.raises(NoMorePages, match="run /list first") as info:
        await session.execute("/more")
    assert classify(info.value).exit_code == 2


async def test_set_api_key_swaps_the_key_and_masks_it(session, sandbox) -> None:
    from petstore_api.errors import AuthenticationError
    from petstore_api.masking import mask_secret

    session.set_api_key("sk-wrong-0000000000")
    with pytest.raises(AuthenticationError):
        await session.execute("/list")
    assert (await session.execute("/env")).masked_key == "sk-...0000"
    session.set_api_key(sandbox.api_key)
    assert len((await session.execute("/list")).pets) == 12
    assert session.env.masked_key == mask_secret(sandbox.api_key)


# -- built whole ---------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "sleep",
        "notifications",
        "ask_approval",
        "policy",
        "actor",
        "client",
        "env",
        "registry",
        "confirm",
        "audit",
        "pending",
        "clock",
        "progress",
        "consent_hint",
        "parts",
        "anything_new",
    ],
)
def test_nothing_is_patched_on_a_session_after_it_is_built(session: CommandSession, name: str) -> None:
    """Every face passes what a session needs when it builds one (bot_commands.session_parts): an attribute
    assigned afterwards raises, so a face that patches one fails its first test."""
    with pytest.raises(AttributeError):
        setattr(session, name, None)


async def test_a_role_changes_through_the_session_and_a_read_only_view_is_a_new_session(
    make_session: Callable[..., CommandSession],
) -> None:
    from bot_commands.policy import Actor, Role

    session = make_session(actor=Actor(id="@ann:x", role=Role.VIEWER, where="matrix:!r"))
    assert (await session.run("/add Rex --category 3")).failure.code == "forbidden"  # type: ignore[union-attr]
    session.assume_role(Role.OPERATOR)
    assert session.actor == Actor(id="@ann:x", role=Role.OPERATOR, where="matrix:!r")
    assert session.history == ["/add Rex --category 3"]  # the conversation stays
    view = session.read_only_view()
    assert view is not session and view.actor == session.actor and view.client is session.client
    assert view.history == []
    assert (await view.run("/add Rex --category 3")).failure.code == "read_only"  # type: ignore[union-attr]
    assert not session.policy.read_only and (await session.run("/add Rex --category 3")).ok
