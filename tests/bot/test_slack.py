"""petstore bot slack: signed requests over a loopback socket to the real app on the real sandbox service.

Slack cannot be reached from here: the tests speak its published protocol (v0-signed slash commands and
block_actions presses, responses and response_url bodies in Block Kit) to the real app.

Delayed responses go through slack_sdk's webhook client to a capture server on loopback (standing in for
hooks.slack.com, whose origin the app is told to trust here). The one stand-in: a client that answers late, for the
slow-service path (a real service does not slow down on demand).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from holds_support import held_writes
from hypothesis import given
from hypothesis import strategies as st

from bot_commands.policy import Actor
from bot_commands.session import CommandSession
from petstore_bot.rules import bot_policy
from petstore_bot.slack import SETTLED, SlackFace, post_json
from petstore_bot.slack_forms import Press, press_of
from petstore_bot.slack_render import (
    APPROVE_ACTION,
    CANCEL_ACTION,
    CONFIRM_ACTION,
    DENY_ACTION,
    prompt_block_id,
    slack_person,
)
from petstore_bot.slack_verify import MAX_AGE, SlackSignature

from .conftest import Bot
from .slack_support import SECRET, Capture, SlackClient, block_text, buttons, press_payload, serving, sign

ALICE, OSCAR, BOB, CAROL = "UALICE", "UOSCAR", "UBOB", "UCAROL"
OPERATORS, VIEWERS = [f"slack:T1/{ALICE}", f"slack:T1/{OSCAR}"], [f"slack:T1/{BOB}"]


@dataclass
class Rig:
    bot: Bot
    slack: SlackClient
    capture: Capture
    face: SlackFace


class SlowClient:
    """The sandbox client answering every call ``delay`` seconds late (the slow-service fault)."""

    def __init__(self, inner: Any, delay: float) -> None:
        self._inner, self._delay = inner, delay

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if not asyncio.iscoroutinefunction(attr):
            return attr

        async def slow(*args: Any, **kwargs: Any) -> Any:
            await asyncio.sleep(self._delay)
            return await attr(*args, **kwargs)

        return slow


@pytest.fixture
async def rig(make_bot: Callable[..., Bot]) -> AsyncIterator[Callable[..., Any]]:
    async with contextlib.AsyncExitStack() as stack:

        async def start(
            *,
            extra: str = "",
            delay: float = 0.0,
            ack_after: float = 2.5,
            origin: str | None = None,
            clock: Callable[[], float] | None = None,
        ) -> Rig:
            bot = make_bot(extra, roles=(OPERATORS, VIEWERS), platform="slack", prefix="/pets ")
            if delay or clock:  # sessions as the bot makes them, on a slow client or the test's clock
                policy = bot_policy(bot.composition.policy, bot.settings)
                pending = held_writes(
                    bot.state.database, roles=bot.core.roles, seal=bot.state.pending.seal, clock=clock or time.time
                )

                def session(actor: Actor) -> CommandSession:
                    c = bot.composition
                    client = SlowClient(c.client, delay) if delay else c.client
                    return CommandSession(
                        client,
                        env=c.env,
                        registry=c.registry,
                        actor=actor,
                        policy=policy,
                        audit=c.audit,
                        confirm_ttl=bot.settings.confirm_ttl,
                        pending=pending,
                    )

                bot.core._make_session = session
            capture = Capture()
            hook = await stack.enter_async_context(serving(capture.app()))
            face = SlackFace(
                core=bot.core,
                flavour="slack",
                post=post_json,
                signature=SlackSignature(SECRET),
                response_origin=origin or hook,
                ack_after=ack_after,
            )
            base = await stack.enter_async_context(serving(face.app()))
            http = await stack.enter_async_context(httpx.AsyncClient(timeout=30))
            return Rig(bot=bot, slack=SlackClient(http=http, base=base, hook=hook), capture=capture, face=face)

        yield start


async def test_health(rig: Callable[..., Any]) -> None:
    r: Rig = await rig()
    assert (await r.slack.http.get(f"{r.slack.base}/healthz")).json() == {"ok": True}


async def test_reads_answer_at_once_ephemeral_in_a_monospaced_block(rig: Callable[..., Any]) -> None:
    r: Rig = await rig()
    listed = (await r.slack.command("list sold --limit 3", user=BOB)).json()
    assert listed["response_type"] == "ephemeral"
    text = block_text(listed)
    assert text.startswith("```\nid  name    category  status\n 4  Goldie") and text.endswith("```")
    assert "more on the next page (/pets more, or /pets list --all for every page)" in text
    assert "Tweety" not in block_text((await r.slack.command("more", user=BOB)).json())  # sold only: 4, 6, 9 ...
    for line, expected in [
        ("get 1", "Rex"),
        ("orders", "orders"),
        ("whoami", "slack:T1/UBOB"),
        ("env", "sk-..."),
        ("", "/pets list [STATUS]"),
        ("help get", "/pets get ID"),
    ]:
        payload = (await r.slack.command(line, user=BOB)).json()
        assert payload["response_type"] == "ephemeral" and expected in block_text(payload), line
    assert r.capture.posts == []


async def test_help_lists_only_what_the_asker_may_run(rig: Callable[..., Any]) -> None:
    r: Rig = await rig(extra='default_role = "none"')
    viewer, operator, nobody = [block_text((await r.slack.command("help", user=u)).json()) for u in (BOB, ALICE, CAROL)]
    assert "/pets add" not in viewer and "/pets add NAME" in operator and "/pets confirm CODE" in operator
    assert "/pets list" not in nobody and "/pets whoami" in nobody
    rules = "Start a command with /pets (/pets {}). /pets help COMMAND explains one."
    assert nobody.removesuffix("```").splitlines()[-1] == rules.format("whoami"), "an example role none may run"
    assert viewer.removesuffix("```").splitlines()[-1] == rules.format("list sold")
    assert "with or without" not in viewer + operator + nobody
    refused = block_text((await r.slack.command("list", user=CAROL)).json())
    assert "Not allowed: /pets list needs the viewer role in this room; you have none" in refused


async def test_a_viewer_write_is_refused_and_nothing_is_sent(rig: Callable[..., Any]) -> None:
    r: Rig = await rig()
    before = await r.bot.pet_count()
    payload = (await r.slack.command("add Rex --category 3", user=BOB)).json()
    assert payload["response_type"] == "ephemeral" and "needs the operator role" in block_text(payload)
    assert buttons(payload) == {} and await r.bot.pet_count() == before


async def test_confirm_button_by_the_asker_writes_once_in_channel_and_replaces_the_prompt(
    rig: Callable[..., Any],
) -> None:
    """Signed slash command and block_actions presses over loopback (Slack's protocol; Slack cannot be reached): the
    asker's Confirm shows the write to the channel and replaces the ephemeral prompt (replace_original, no buttons
    left) with a line saying so; another person's press, or a used code, is told to the presser alone and replaces
    nothing."""
    r: Rig = await rig()
    before = await r.bot.pet_count()
    preview = (await r.slack.command('add "Rex the Dog" --category 3', user=ALICE)).json()
    assert preview["response_type"] == "ephemeral" and "To add a pet, reply" in block_text(preview)
    assert "name        Rex the Dog\ncategoryId  3" in block_text(preview), "every field it sends, in full"
    code = buttons(preview)[CONFIRM_ACTION]
    assert buttons(preview) == {CONFIRM_ACTION: code, CANCEL_ACTION: code} and await r.bot.pet_count() == before

    assert (await r.slack.press(CONFIRM_ACTION, code, user=OSCAR, prompt=preview)).status_code == 200
    other = await r.capture.next_post()
    assert other["response_type"] == "ephemeral" and "Nothing to confirm" in block_text(other)
    assert "replace_original" not in other and await r.bot.pet_count() == before

    assert (await r.slack.press(CONFIRM_ACTION, code, user=ALICE, prompt=preview)).status_code == 200
    shown, replaced = (await r.capture.until(3))[1:]
    assert shown["response_type"] == "in_channel" and shown["replace_original"] is False
    assert "Rex the Dog" in block_text(shown) and await r.bot.pet_count() == before + 1
    assert replaced["replace_original"] is True and replaced["response_type"] == "ephemeral"
    assert buttons(replaced) == {} and block_text(replaced) == f"```\n{SETTLED}\n```"

    assert (await r.slack.press(CONFIRM_ACTION, code, user=ALICE, prompt=preview)).status_code == 200  # replayed
    again = (await r.capture.until(4))[3]
    assert "Nothing to confirm" in block_text(again) and "replace_original" not in again
    assert await r.bot.pet_count() == before + 1
    outcomes = [json.loads(line)["outcome"] for line in r.bot.audit_lines()]
    assert outcomes == ["pending", "refused", "ok", "refused"]


async def test_the_same_user_id_pressing_from_another_team_is_not_the_asker(rig: Callable[..., Any]) -> None:
    """A person on Slack is a team and a user: ALICE's id pressing Confirm from another team (a Slack Connect
    channel, another workspace of a grid) neither confirms ALICE's write nor replaces her prompt."""
    r: Rig = await rig()
    before = await r.bot.pet_count()
    preview = (await r.slack.command("add Twin --category 3", user=ALICE)).json()
    code = buttons(preview)[CONFIRM_ACTION]
    assert f":{r.slack.team}/{ALICE}" in next(b["block_id"] for b in preview["blocks"] if b["type"] == "actions")

    assert (await r.slack.press(CONFIRM_ACTION, code, user=ALICE, prompt=preview, team="T2")).status_code == 200
    elsewhere = await r.capture.next_post()
    assert "replace_original" not in elsewhere and elsewhere["response_type"] == "ephemeral"
    assert "Twin" not in block_text(elsewhere) and await r.bot.pet_count() == before

    assert (await r.slack.press(CONFIRM_ACTION, code, user=ALICE, prompt=preview)).status_code == 200
    replaced = (await r.capture.until(3))[-1]
    assert replaced["replace_original"] is True and await r.bot.pet_count() == before + 1


def test_a_press_is_by_the_asker_only_with_the_askers_team_and_user() -> None:
    prompt = {"blocks": [{"type": "actions", "block_id": prompt_block_id("ABCD", slack_person("T1", "U1"))}]}

    def press(*, user: str, team: str) -> Press:
        payload = press_payload(CONFIRM_ACTION, "ABCD", user=user, team=team, channel="C1", prompt=prompt)
        return press_of({**payload, "response_url": "https://hooks.slack.com/x"}, prefix="/pets ")

    assert press(user="U1", team="T1").by_asker and press(user="U1", team="T1").incoming.user == "slack:T1/U1"
    assert not press(user="U1", team="T2").by_asker and press(user="U1", team="T2").incoming.user == "slack:T2/U1"
    assert not press(user="U2", team="T1").by_asker


async def test_approve_button_by_a_second_operator_runs_the_write_once(rig: Callable[..., Any]) -> None:
    """Signed slash command and block_actions presses over loopback (Slack's protocol; Slack cannot be reached), with
    approvals on: the request is posted for the channel with Approve/Deny buttons and every field; the asker's and a
    viewer's Approve are refused to them alone; another operator's runs the write once and replaces the prompt."""
    r: Rig = await rig(extra='approvals = ["sandbox"]')
    before = await r.bot.pet_count()
    request = (await r.slack.command("add Prodpet --category 3", user=ALICE)).json()
    assert request["response_type"] == "in_channel" and "asks to add a pet on sandbox" in block_text(request)
    assert "name        Prodpet\ncategoryId  3" in block_text(request)
    code = buttons(request)[APPROVE_ACTION]
    assert buttons(request) == {APPROVE_ACTION: code, DENY_ACTION: code}

    for user, expected in ((ALICE, "yourself: someone else must approve it"), (BOB, "needs the operator role")):
        assert (await r.slack.press(APPROVE_ACTION, code, user=user, prompt=request)).status_code == 200
        refused = await r.capture.next_post()
        assert expected in block_text(refused) and refused["response_type"] == "ephemeral", user
        assert "replace_original" not in refused and await r.bot.pet_count() == before

    assert (await r.slack.press(APPROVE_ACTION, code, user=OSCAR, prompt=request)).status_code == 200
    done = await r.capture.next_post()
    assert done["replace_original"] is True and buttons(done) == {} and "Prodpet" in block_text(done)
    assert await r.bot.pet_count() == before + 1
    assert (await r.slack.press(DENY_ACTION, code, user=OSCAR, prompt=request)).status_code == 200
    late = await r.capture.next_post()
    assert "was already approved by slack:T1/UOSCAR" in block_text(late) and "replace_original" not in late
    approved = [json.loads(line) for line in r.bot.audit_lines() if "approver" in json.loads(line)]
    assert [(e["actor"], e["approver"], e["outcome"]) for e in approved] == [
        (f"slack:T1/{ALICE}", f"slack:T1/{OSCAR}", "ok")
    ]


async def test_cancel_button_drops_the_write_and_replaces_the_prompt(rig: Callable[..., Any]) -> None:
    r: Rig = await rig()
    before = await r.bot.pet_count()
    preview = (await r.slack.command("add Nope --category 1", user=ALICE)).json()
    code = buttons(preview)[CANCEL_ACTION]
    await r.slack.press(CANCEL_ACTION, code, user=ALICE, prompt=preview)
    cancelled = await r.capture.next_post()
    assert cancelled["replace_original"] is True and "Cancelled: add pet 'Nope'" in block_text(cancelled)
    assert buttons(cancelled) == {}
    await r.slack.press(CONFIRM_ACTION, code, user=ALICE, prompt=preview)
    assert "Nothing to confirm" in block_text(await r.capture.next_post())
    assert await r.bot.pet_count() == before
    assert len(r.capture.posts) == 2


async def test_a_press_after_the_confirmation_expired_sends_nothing(rig: Callable[..., Any]) -> None:
    now = [1000.0]
    r: Rig = await rig(clock=lambda: now[0])
    before = await r.bot.pet_count()
    code = buttons((await r.slack.command("add Late --category 1", user=ALICE)).json())[CONFIRM_ACTION]
    now[0] += r.bot.settings.confirm_ttl + 1
    assert (await r.slack.press(CONFIRM_ACTION, code, user=ALICE)).status_code == 200
    expired = await r.capture.next_post()
    assert expired["response_type"] == "ephemeral"
    assert f"Nothing to confirm: code {code} expired after 60 s; nothing was sent" in block_text(expired)
    assert await r.bot.pet_count() == before
    assert [json.loads(line)["outcome"] for line in r.bot.audit_lines()] == ["pending", "refused"]


async def test_a_command_delivered_twice_writes_once_and_the_second_answer_says_so(rig: Callable[..., Any]) -> None:
    """The same signed slash command (same trigger_id) delivered twice over loopback, as a retrying proxy would (Slack's
    protocol; Slack itself cannot be reached): one pet; the second answer, ephemeral, says nothing new was created;
    the audit marks it replayed."""
    r: Rig = await rig(extra="confirm_writes = false")
    before = await r.bot.pet_count()
    body = r.slack.command_body("add Dup2 --category 2", user=ALICE)
    url = f"{r.slack.base}/slack/commands"
    first = (await r.slack.http.post(url, content=body, headers=sign(body))).json()
    again = (await r.slack.http.post(url, content=body, headers=sign(body))).json()
    assert await r.bot.pet_count() == before + 1
    pet_id = json.loads(r.bot.audit_lines()[0])["pet_id"]
    assert first["response_type"] == "in_channel" and f"Added pet {pet_id}" in block_text(first)
    assert again["response_type"] == "ephemeral"
    assert f"Pet {pet_id} was already added by this same request; nothing new was created" in block_text(again)
    audit = [json.loads(line) for line in r.bot.audit_lines()]
    assert [(e["pet_id"], e["applied"], e.get("replayed", False)) for e in audit] == [
        (pet_id, "yes", False),
        (pet_id, "yes", True),
    ]


#: A line for every command of the registry (a new command fails the test below until it has one).
SAMPLE_LINES = {
    "list": "list --limit 2",
    "more": "more",
    "add": "add Rex --category 1",
    "get": "get 1",
    "orders": "orders",
    "env": "env",
    "whoami": "whoami",
    "help": "help",
    "confirm": "confirm ABCD",
    "cancel": "cancel ABCD",
    "approve": "approve ABCD23",
    "deny": "deny ABCD23 no",
    "audit": "audit 3",
    "history": "history",
    "sleep": "sleep 0",
    "expect": "expect ok",
    "quit": "quit",
    "watch": "watch available",
    "unwatch": "unwatch",
    "watches": "watches",
    "every": "every 10m /list",
    "schedules": "schedules",
    "unschedule": "unschedule 1",
}
#: Need a port this rig's face has not (its bot posts nothing unasked): one line saying so.
NOT_HERE = ("watch", "unwatch", "watches", "every", "schedules", "unschedule")
#: What each role gets: the commands refused (and why, after the command's name); every other command runs.
NO_APPROVALS = dict.fromkeys(["approve", "deny"], ": writes here need no second person")
REFUSED = {
    "none": {
        **dict.fromkeys(
            ["list", "more", "get", "orders", "env"], " needs the viewer role in this room; you have none"
        ),  # NOT_HERE: where no role would make them work, they say so first
        **dict.fromkeys(["add", "confirm", "cancel"], " needs the operator role in this room; you have none"),
        "audit": " needs the admin role in this room; you have none (ask an admin)",
        **NO_APPROVALS,
    },
    "viewer": {
        **dict.fromkeys(["add", "confirm", "cancel"], " needs the operator role in this room; you have viewer"),
        "audit": " needs the admin role in this room; you have viewer (ask an admin)",
        **NO_APPROVALS,
    },
    "operator": {"audit": " needs the admin role in this room; you have operator (ask an admin)", **NO_APPROVALS},
}


@pytest.mark.parametrize("role", ["none", "viewer", "operator"])
async def test_every_command_for_every_role(rig: Callable[..., Any], role: str) -> None:
    from bot_commands.commands import default_registry

    assert set(SAMPLE_LINES) == set(default_registry().names(aliases=False))
    r: Rig = await rig(extra='default_role = "none"')
    user = {"none": CAROL, "viewer": BOB, "operator": ALICE}[role]
    before = await r.bot.pet_count()
    for name, line in SAMPLE_LINES.items():
        answer = await r.slack.command(line, user=user)
        assert answer.status_code == 200, line
        payload, text = answer.json(), block_text(answer.json())
        assert payload["response_type"] == "ephemeral", line  # no command here completes a write
        if name in ("history", "quit"):  # the process's and local files' commands: terminals only
            assert f"Not allowed: /pets {name} is only available in a terminal" in text, line
        elif name in REFUSED[role]:
            assert f"Not allowed: /pets {name}{REFUSED[role][name]}" in text and buttons(payload) == {}, line
        elif name in NOT_HERE:
            assert f"Not allowed: /pets {name} works in chat rooms only, with a bot that can post" in text, line
        else:
            assert "Not allowed" not in text, (line, text)
    assert await r.bot.pet_count() == before  # the operator's add waits for its Confirm
    assert r.capture.posts == []


@pytest.mark.parametrize(
    "case", ["bad signature", "old timestamp", "future timestamp", "no headers", "not a number", "other secret"]
)
async def test_an_unverified_request_gets_401_and_runs_nothing(rig: Callable[..., Any], case: str) -> None:
    r: Rig = await rig(extra="confirm_writes = false")
    before = await r.bot.pet_count()
    body = r.slack.command_body("add Forged --category 1", user=ALICE)
    headers = {
        "bad signature": {**sign(body), "X-Slack-Signature": "v0=" + "0" * 64},
        "old timestamp": sign(body, timestamp=int(time.time()) - MAX_AGE - 60),  # the boundary: the test below
        "future timestamp": sign(body, timestamp=int(time.time()) + MAX_AGE + 60),
        "no headers": {"Content-Type": "application/x-www-form-urlencoded"},
        "not a number": {**sign(body), "X-Slack-Request-Timestamp": "soon"},
        "other secret": sign(body, secret="not-the-secret"),
    }[case]
    for path in ("/slack/commands", "/slack/interactions"):
        answer = await r.slack.http.post(f"{r.slack.base}{path}", content=body, headers=headers)
        assert answer.status_code == 401 and answer.json() == {"error": "unauthorized"}
    assert await r.bot.pet_count() == before and r.bot.audit_lines() == []


@pytest.mark.parametrize(("offset", "refused"), [(-301, True), (-300, False), (300, False), (301, True)])
def test_a_timestamp_more_than_five_minutes_from_the_clock_is_refused(offset: int, refused: bool) -> None:
    """On a fixed clock, so the boundary cannot move while the request is in flight."""
    body = b"command=%2Fpets&text=list"
    now = 1_800_000_000
    check = SlackSignature(SECRET, clock=lambda: float(now)).check
    headers = {k.lower(): v for k, v in sign(body, timestamp=now + offset).items()}
    reason = check(headers=headers, body=body)
    assert reason == ("X-Slack-Request-Timestamp is more than 5 minutes away (a replay?)" if refused else None)


async def test_the_refusal_reason_is_logged_never_the_secret(
    rig: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    r: Rig = await rig()
    body = r.slack.command_body("list", user=ALICE)
    with caplog.at_level(logging.WARNING, logger="petstore_bot.slack"):
        await r.slack.http.post(
            f"{r.slack.base}/slack/commands", content=body, headers=sign(body, timestamp=int(time.time()) - 3600)
        )
    assert "more than 5 minutes away" in caplog.text and SECRET not in caplog.text


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (b"x" * 20_000, 413, "request body too large: at most 16384 bytes"),
        (b"%%%not a form", 400, "body is not a URL-encoded form"),
        (b"\xff\xfe", 401, "unauthorized"),  # not UTF-8: cannot be verified at all
        (b"text=list&user_id=U1", 400, "missing form fields: command, channel_id, response_url, team_id"),
    ],
    ids=["huge", "not a form", "not UTF-8", "fields missing"],
)
async def test_a_huge_or_malformed_body_is_a_clear_4xx_and_runs_nothing(
    rig: Callable[..., Any], body: bytes, status: int, message: str
) -> None:
    r: Rig = await rig()
    answer = await r.slack.http.post(f"{r.slack.base}/slack/commands", content=body, headers=sign(body))
    assert (answer.status_code, answer.json()) == (status, {"error": message})
    assert r.bot.audit_lines() == []


async def test_a_failure_inside_the_bot_is_one_ephemeral_line_and_the_app_stays_up(
    rig: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    """The audit log's disk refusing a write's line (a failure nobody planned for) over Slack's protocol, signed, on
    loopback: one ephemeral line for the person, the details in the log, and the next command answered."""
    from petstore_bot.chat import INTERNAL_ERROR

    r: Rig = await rig(extra="confirm_writes = false")
    audit = r.bot.composition.audit
    assert audit is not None
    audit.close()
    audit.path.unlink()
    audit.path.mkdir()  # the audit log cannot be opened again: the write's audit line fails
    with caplog.at_level(logging.ERROR, logger="petstore_bot.slack"):
        answer = await r.slack.command("add Rex --category 1", user=ALICE)
    assert answer.status_code == 200
    assert answer.json()["response_type"] == "ephemeral" and block_text(answer.json()) == f"```\n{INTERNAL_ERROR}\n```"
    assert "failed inside the bot" in caplog.text
    assert "slack:T1/UBOB" in block_text((await r.slack.command("whoami", user=BOB)).json())


async def test_a_slow_service_gets_an_ack_then_one_delayed_response(rig: Callable[..., Any]) -> None:
    r: Rig = await rig(delay=0.5, ack_after=0.1)
    ack = (await r.slack.command("get 1", user=BOB)).json()
    assert ack["response_type"] == "ephemeral" and "Working on it: get 1" in block_text(ack)
    delayed = await r.capture.next_post()
    assert "Rex" in block_text(delayed) and delayed["response_type"] == "ephemeral"
    await r.face.drain()
    assert len(r.capture.posts) == 1


async def test_a_response_url_off_the_platform_origin_is_never_called(
    rig: Callable[..., Any], caplog: pytest.LogCaptureFixture
) -> None:
    r: Rig = await rig(delay=0.3, ack_after=0.05, origin="https://hooks.slack.com")
    with caplog.at_level(logging.WARNING, logger="petstore_bot.slack"):
        await r.slack.command("get 1", user=BOB)
        await asyncio.sleep(0)  # let the delayed task start
        await r.face.drain()
    assert r.capture.posts == [] and "not on https://hooks.slack.com" in caplog.text


async def test_hostile_names_ping_nobody_and_link_nowhere(rig: Callable[..., Any]) -> None:
    r: Rig = await rig(extra="confirm_writes = false")
    hostile = "<!channel> <@U123> <http://x|click> *bold* ``` & \x1b[31m"
    created = (await r.slack.command(f"add {json.dumps(hostile)} --category 1", user=ALICE)).json()
    listed = (await r.slack.command("list --limit 100", user=ALICE)).json()
    assert created["response_type"] == "in_channel"
    for payload in (created, listed):
        text = block_text(payload) + payload["text"]
        assert "<" not in text and ">" not in text and "\x1b" not in text
        assert "&lt;!channel&gt; &lt;@U123&gt; &lt;http://x|click&gt; *bold*" in text
        assert "`\u200b`\u200b` &amp;" in block_text(payload)  # the data cannot close the code block


async def test_past_the_rate_limit_every_command_gets_an_ephemeral_slow_down(rig: Callable[..., Any]) -> None:
    """Signed slash commands over loopback (Slack's protocol; Slack itself cannot be reached): a response is seen by
    its sender alone, so each one past the limit says why nothing ran (a Matrix room gets one such reply, then
    silence)."""
    r: Rig = await rig(extra='rate_limit = "2/1h"')
    answers = [(await r.slack.command("whoami", user=BOB)).json() for _ in range(5)]
    assert ["slack:T1/UBOB" in block_text(a) for a in answers] == [True, True, False, False, False]
    for slowed in answers[2:]:
        assert slowed["response_type"] == "ephemeral"
        assert "Slow down: at most 2 commands in 3600 s per person" in block_text(slowed)
    assert "slack:T1/UALICE" in block_text((await r.slack.command("whoami", user=ALICE)).json())  # per person


def test_every_payload_shape_is_valid_block_kit() -> None:
    """slack_sdk's Block Kit models parse each payload the app builds back to the same dicts."""
    from slack_sdk.models.blocks import Block

    from bot_commands.results import ConfirmationNeeded
    from petstore_bot.slack_render import Message, slack_payload

    asked = ConfirmationNeeded(code="7F3K", what="add pet 'Rex'", line="add Rex", ttl=60)
    for message in (
        Message(text="a\n" * 5000, in_channel=False),
        Message(text="x", in_channel=True),
        Message(text="To add pet 'Rex'?", in_channel=False, confirm=asked),
    ):
        blocks = slack_payload(message)["blocks"]
        assert isinstance(blocks, list) and len(blocks) <= 50
        for block in blocks:
            parsed = Block.parse(block)
            assert parsed is not None and parsed.to_dict() == block


@given(st.lists(st.integers(min_value=0, max_value=3000), min_size=0, max_size=4), st.sampled_from(["\n", "\r\n"]))
def test_a_reply_is_cut_into_sections_on_line_ends(lengths: list[int], end: str) -> None:
    from petstore_bot.slack_render import _SECTION_MAX, _chunks

    text = end.join("x" * n for n in lengths)
    pieces = _chunks(text)
    assert all(len(piece) <= _SECTION_MAX for piece in pieces)
    assert "\n".join(pieces) == "\n".join(line[:_SECTION_MAX] for line in text.splitlines())
    assert len(pieces) == 1 or len(text) >= _SECTION_MAX


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"%%%not a form", "body is not a URL-encoded form"),
        (b"a=1&&b=2", "body is not a URL-encoded form"),
        (b"novalue", "body is not a URL-encoded form"),
        (b"a=\xff", "body is not UTF-8"),
        (b"&".join([b"a=1"] * 65), "too many form fields: at most 64"),
    ],
)
def test_the_form_parser_says_why_a_body_is_not_a_form(body: bytes, reason: str) -> None:
    from petstore_bot.slack import BadRequest, parse_form

    with pytest.raises(BadRequest, match=reason):
        parse_form(body)


def test_the_form_parser_keeps_the_first_value_of_a_repeated_field() -> None:
    from petstore_bot.slack import parse_form

    assert parse_form(b"a=1&b=x+y%2Fz&a=2&c=") == {"a": "1", "b": "x y/z", "c": ""}
    assert parse_form(b"&".join([b"a=1"] * 64)) == {"a": "1"}


async def test_a_channels_admin_reads_its_audit_as_data(rig: Callable[..., Any]) -> None:
    hostile = "<!channel> <@UBOB> *bold* <http://x|link>"
    grants = f'[bot.rooms."C1"]\noperators = ["slack:T1/{ALICE}"]\nadmins = ["slack:T1/{CAROL}"]\n'
    r: Rig = await rig(extra=grants)
    preview = (await r.slack.command(f"add {hostile} --category 2", user=ALICE)).json()
    code = buttons(preview)[CONFIRM_ACTION]
    assert (await r.slack.press(CONFIRM_ACTION, code, user=ALICE, prompt=preview)).status_code == 200
    await r.capture.next_post()
    refused = block_text((await r.slack.command("audit", user=ALICE)).json())
    assert "Not allowed: /pets audit needs the admin role in this room; you have operator (ask an admin)" in refused
    shown = (await r.slack.command("audit 5", user=CAROL)).json()
    text = block_text(shown)
    assert shown["response_type"] == "ephemeral" and text.startswith("```")
    assert "&lt;!channel&gt; &lt;@UBOB&gt;" in text and "<!channel>" not in json.dumps(shown)
    assert "the last 2 audit lines of this room" in text and "pending" in text
