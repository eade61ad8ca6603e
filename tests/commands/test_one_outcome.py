"""One outcome for every face: every result has a view in every renderer; the policy; the audit trail."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest
from holds_support import sqlite_holds
from rich.console import Console

from bot_commands import results as r
from bot_commands.audit import AuditLog
from bot_commands.commands import default_registry
from bot_commands.errors import classify
from bot_commands.formats import data_of, to_csv, to_json, to_tsv
from bot_commands.policy import Actor, Policy, Role
from bot_commands.render import to_rich
from bot_commands.render_text import to_html, to_markdown, to_plain
from bot_commands.session import CommandSession
from bot_commands.views import present, present_failure
from petstore_api.errors import ConnectError, TimeoutError
from petstore_api.models import DeprecationNotice, Pet
from petstore_bot.roles import RoleBook

HOSTILE = "<b>x</b> @room [link](http://x) *y* \x1b[31m"
PET = Pet.model_validate({"id": 7, "name": HOSTILE, "categoryId": 3, "status": "sold", "colour": "<i>"})
SAMPLES: dict[type[r.Result], r.Result] = {
    r.PetList: r.PetList(pets=[PET], next_url="http://x/v1/pets?cursor=1"),
    r.PetCreated: r.PetCreated(pet=PET),
    r.PetDetail: r.PetDetail(pet=PET, notice=DeprecationNotice("getPet", date(2030, 12, 5)), first_notice=True),
    r.OrdersListing: r.OrdersListing(data=[{"id": 1, "note": HOSTILE}]),
    r.EnvInfo: r.EnvInfo(env="production", base_url="https://p/v1", masked_key="sk-...abcd"),
    r.Help: default_registry().help(),
    r.Notice: r.Notice(text=HOSTILE),
    r.Quit: r.Quit(),
    r.Paused: r.Paused(seconds=1.5),
    r.ExpectationMet: r.ExpectationMet(expectation="count 3"),
    r.HistoryListing: r.HistoryListing(lines=("/list", HOSTILE)),
    r.HistoryScript: r.HistoryScript(name=HOSTILE, text="# petstore script\n/list\n", count=1),
    r.WhoAmI: r.WhoAmI(actor="@alice:x", role="viewer", where="!room", commands=("/list",)),
    r.WatchList: r.WatchList(statuses=("", "available"), text=HOSTILE),
    r.ScheduleList: r.ScheduleList(
        rows=(r.ScheduleRow(id=1, rhythm="every 10m", command=HOSTILE, creator="@a:x", next_run="2026-11-27T12:00"),),
        timezone="UTC",
        text=HOSTILE,
    ),
    r.ConfirmationNeeded: r.ConfirmationNeeded(code="7F3K", what="add pet 'Rex'", line="/add Rex", ttl=60),
    r.Cancelled: r.Cancelled(code="7F3K", what="add pet 'Rex'"),
    r.AuditListing: r.AuditListing(
        where="matrix:!room",
        records=(
            r.AuditRecord(
                time="2026-11-27T11:00:00.000+00:00",
                actor="@alice:x",
                role="operator",
                line=f"/add {HOSTILE} --category 3",
                outcome="ok",
                applied="yes",
                details=(("pet", "7"), ("message", HOSTILE)),
            ),
        ),
    ),
    r.ApprovalNeeded: r.ApprovalNeeded(
        code="7F3K2M",
        what="add pet 'Rex'",
        line="/add Rex",
        ttl=3600,
        asker=HOSTILE,
        env="production",
        action="add a pet",
        fields=(("name", HOSTILE),),
    ),
    r.Denied: r.Denied(code="7F3K2M", what="add pet 'Rex'", asker="@ann:x", by="@bob:x", reason=HOSTILE),
    r.ApprovalRequested: r.ApprovalRequested(code="7F3K2M", what=HOSTILE, expires_in=3600, room="!ops:x"),
    r.ApprovalRequests: r.ApprovalRequests(
        records=({"id": "7F3K2M", "asker": "local:ann", "what": HOSTILE, "state": "waiting", "age": 42},)
    ),
}


def _all_result_types() -> list[type[r.Result]]:
    """Every result class the module defines (slots=True leaves the pre-slots class registered too)."""
    kinds = {t for t in r.Result.__subclasses__() if getattr(r, t.__name__, None) is t}
    return sorted(kinds, key=lambda t: t.__name__)


def _rich(view: object) -> str:
    console = Console(width=100, record=True, color_system=None, file=open("/dev/null", "w"))
    console.print(to_rich(view))  # type: ignore[arg-type]
    return console.export_text()


RENDERERS: dict[str, Callable[[object], str]] = {
    "rich": _rich,
    "plain": to_plain,
    "markdown": to_markdown,
    "html": to_html,  # type: ignore[dict-item]
}


@pytest.mark.parametrize("kind", _all_result_types(), ids=lambda t: t.__name__)
@pytest.mark.parametrize("renderer", sorted(RENDERERS))
def test_every_result_type_renders_in_every_renderer(kind: type[r.Result], renderer: str) -> None:
    assert kind in SAMPLES, f"{kind.__name__} is a new result type: add a sample here and a view in views.py"
    shown = present(SAMPLES[kind])
    text = RENDERERS[renderer](shown.view)
    assert isinstance(text, str) and "\x1b" not in text
    assert shown.summary


@pytest.mark.parametrize("kind", _all_result_types(), ids=lambda t: t.__name__)
def test_every_result_type_is_records_or_prose_in_the_machine_formats(kind: type[r.Result]) -> None:
    data = data_of(SAMPLES[kind])
    if data is None:
        assert kind in (r.Notice, r.ExpectationMet, r.Paused, r.Quit)  # said on stderr, never data
        return
    text = to_csv(data) + to_tsv(data) + to_json(data.records)
    assert "\x1b" not in text and (data.records or kind is r.HistoryListing)


def test_a_result_type_without_a_view_fails_loudly() -> None:
    class Unknown(r.Result):
        pass

    with pytest.raises(TypeError, match="no view for Unknown"):
        present(Unknown())


def test_service_text_takes_no_effect_in_html_and_markdown() -> None:
    view = present(SAMPLES[r.PetList]).view
    html = to_html(view)
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html and "<table>" in html
    markdown = to_markdown(view)
    assert "[link](http" not in markdown and "\\[link\\]\\(http" in markdown and "&lt;b&gt;" in markdown
    plain = to_plain(present(SAMPLES[r.Notice]).view)
    assert plain.startswith("<b>x</b> @room") and "\u241b[31m" in plain


def test_failures_have_one_view_too() -> None:
    shown = present_failure(classify(ConnectError("refused")))
    for render in RENDERERS.values():
        assert "refused" in render(shown.view)


# -- the policy ---------------------------------------------------------------------


@pytest.fixture
def as_actor(make_session) -> Callable[..., CommandSession]:
    def make(role: Role, **policy: bool) -> CommandSession:
        return make_session(actor=Actor(id=f"@{role}:test", role=role, where="!room"), policy=Policy(**policy))

    return make


async def test_a_viewer_cannot_write_and_nothing_is_sent(as_actor, transport) -> None:
    viewer = as_actor(Role.VIEWER)
    outcome = await viewer.run("/add Rex --category 3")
    assert outcome.failure is not None and outcome.failure.code == "forbidden" and outcome.exit_code == 2
    assert "needs the operator role" in outcome.failure.message and transport.requests == []
    assert (await viewer.run("/list")).ok


async def test_no_role_may_only_ask_for_help(as_actor, transport) -> None:
    nobody = as_actor(Role.NONE)
    assert (await nobody.run("/list")).failure.code == "forbidden"  # type: ignore[union-attr]
    assert transport.requests == []
    assert [c.name for c in nobody.allowed_commands()] == ["whoami", "help", "history", "sleep", "expect", "quit"]


async def test_help_and_completion_list_only_what_the_actor_may_run(as_actor) -> None:
    viewer = as_actor(Role.VIEWER, terminal=False)
    names = [e.name for e in viewer.help().entries]
    assert "/list" in names and "/add" not in names and "/history" not in names and "/quit" not in names
    assert "/add" not in viewer.complete("/a") and viewer.complete("/li") == ["/list"]
    operator = as_actor(Role.OPERATOR, terminal=False, deferred=True)
    assert "/add" in [e.name for e in operator.help().entries] and "/confirm" in operator.complete("/con")


async def test_read_only_hides_writes_and_refuses_them(as_actor) -> None:
    session = as_actor(Role.OPERATOR, read_only=True)
    assert "/add" not in [e.name for e in session.help().entries]
    outcome = await session.run("/add Rex --category 3")
    assert outcome.failure is not None and outcome.failure.code == "read_only"


@pytest.mark.parametrize(
    "flags",
    [
        dict(zip(("read_only", "production", "confirm_writes", "deferred", "terminal"), bits, strict=True))
        for bits in itertools.product((False, True), repeat=5)
    ],
)
def test_what_help_lists_as_allowed_the_policy_never_refuses(flags: dict[str, bool]) -> None:
    """The session runs a command it lists as allowed without asking the policy again: that must be the same answer."""
    policy = Policy(**flags)
    for role in Role:
        actor = Actor(id="@x:test", role=role, where="!room")
        for cmd in default_registry().commands():
            if policy.allows(cmd.access, actor):
                assert policy.refusal(name=cmd.name, access=cmd.access, actor=actor, what="x") is None


async def test_deferred_writes_need_the_code_once_in_time(make_session, transport, tmp_path: Path) -> None:
    now = [1000.0]
    roles = RoleBook.of(operators=["@alice:test", "@bob:test"], viewers=[], default="viewer")

    def person(name: str) -> CommandSession:
        return make_session(
            actor=Actor(id=f"@{name}:test", role=Role.OPERATOR, where="matrix:!room"),
            policy=Policy(terminal=False, deferred=True, confirm_writes=True),
            pending=pending,
        )

    with sqlite_holds(tmp_path, roles=roles, clock=lambda: now[0]) as pending:
        alice, bob = person("alice"), person("bob")
        asked = await alice.run("/add Rex --category 3")
        assert isinstance(asked.result, r.ConfirmationNeeded) and transport.requests == []
        assert (await bob.run(f"/confirm {asked.result.code}")).failure.code == "not_confirmable"  # type: ignore[union-attr]
        done = await alice.run(f"/confirm {asked.result.code.lower()}")
        assert isinstance(done.result, r.PetCreated) and len(transport.requests) == 1
        again = await alice.run(f"/confirm {asked.result.code}")
        assert again.failure is not None and again.failure.code == "not_confirmable"
        late = await alice.run("/add Tom --category 3")
        now[0] += 61.0
        assert isinstance(late.result, r.ConfirmationNeeded)
        expired = await alice.run(f"/confirm {late.result.code}")
        assert expired.failure is not None and "expired" in expired.failure.message and len(transport.requests) == 1


async def test_a_session_without_a_store_holds_nothing(as_actor, transport) -> None:
    alice = as_actor(Role.OPERATOR, terminal=False, deferred=True, confirm_writes=True)
    asked = await alice.run("/add Rex --category 3")
    assert asked.failure is not None and "no write is held here (no state store)" in asked.failure.message
    assert transport.requests == []


# -- the audit trail ----------------------------------------------------------------


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def test_every_write_attempt_is_one_line_on_disk(make_session, tmp_path: Path) -> None:
    path = tmp_path / "audit.ndjson"
    session = make_session(audit=AuditLog(path).open())
    await session.run("/list")  # reads are not audited
    created = await session.run("/add 'Rex the Dog' --category 3")
    await session.read_only_view().run("/add Tom --category 3")
    lines = _lines(path)
    assert [line["outcome"] for line in lines] == ["ok", "refused"]
    assert lines[0]["pet_id"] == created.result.pet.id and lines[0]["applied"] == "yes"  # type: ignore[union-attr]
    assert lines[0]["actor"] == session.actor.id and lines[0]["line"] == "/add 'Rex the Dog' --category 3"
    assert lines[1]["applied"] == "no" and lines[1]["code"] == "read_only"
    assert oct(path.stat().st_mode & 0o777) == "0o600"


async def test_a_write_whose_answer_is_lost_says_so(make_session, tmp_path: Path) -> None:
    path = tmp_path / "audit.ndjson"
    session = make_session(audit=AuditLog(path).open())

    async def lost(**kwargs: object) -> Pet:
        raise TimeoutError("the call took longer than 30 s")

    session.client.create_pet = lost
    outcome = await session.run("/add Rex --category 3")
    assert outcome.failure is not None
    (line,) = _lines(path)
    assert line["outcome"] == "failed" and line["applied"] == "unknown" and "may have been done" in line["message"]


async def test_a_replayed_write_says_so_in_the_result_the_views_the_record_and_the_audit(
    make_session, tmp_path: Path
) -> None:
    """The same request run twice (a chat message delivered twice) against the sandbox service: one pet, and the
    second answer is marked as the service's replay (Idempotent-Replayed) everywhere a face looks."""
    from bot_commands.formats import record

    path = tmp_path / "audit.ndjson"
    session = make_session(audit=AuditLog(path).open())
    first = await session.run("/add Dup --category 2", request_id="chat:room:$event1")
    again = await session.run("/add Dup --category 2", request_id="chat:room:$event1")
    assert isinstance(first.result, r.PetCreated) and isinstance(again.result, r.PetCreated)
    pet_id = first.result.pet.id
    assert again.result.pet.id == pet_id and (first.result.replayed, again.result.replayed) == (False, True)

    said = f"Pet {pet_id} was already added by this same request; nothing new was created"
    shown = present(again.result)
    assert shown.notes == (said,) and "Added" not in to_plain(shown.view) and f"Pet {pet_id}" in to_plain(shown.view)
    assert present(first.result).notes == () and f"Added pet {pet_id}" in to_plain(present(first.result).view)
    assert record(again)["replayed"] is True and "replayed" not in record(first)

    lines = _lines(path)
    assert [(line["applied"], line["pet_id"], line.get("replayed")) for line in lines] == [
        ("yes", pet_id, None),
        ("yes", pet_id, True),
    ]
