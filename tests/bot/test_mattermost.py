"""petstore bot slack --mattermost: the slash command's token, Markdown replies, signed Confirm/Cancel buttons.

Mattermost cannot be run here: the tests send what its server sends (the slash command's form with its token, a
button's integration context back as JSON) to the real app over loopback, on the real sandbox service.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest

from petstore_bot.slack import SlackFace, post_json
from petstore_bot.slack_verify import MattermostToken

from .conftest import Bot
from .slack_support import TOKEN, Capture, serving

ALICE, OSCAR, BOB = "alice1", "oscar1", "bob1"


@dataclass
class MM:
    bot: Bot
    http: httpx.AsyncClient
    base: str
    hook: str
    capture: Capture
    face: SlackFace

    async def command(
        self, text: str, *, user: str, token: str | None = TOKEN, trigger: str | None = "default", channel: str = "ch1"
    ) -> httpx.Response:
        """The slash command as Mattermost sends it; ``trigger=None`` leaves out ``trigger_id`` (older servers)."""
        form = {
            "channel_id": channel,
            "command": "/pets",
            "response_url": f"{self.hook}/hook/x",
            "team_id": "team1",
            "text": text,
            "user_id": user,
            "user_name": user,
        }
        if trigger is not None:
            form["trigger_id"] = f"t-{text}-{user}" if trigger == "default" else trigger
        if token is not None:
            form["token"] = token
        return await self.http.post(
            f"{self.base}/slack/commands",
            content=urlencode(form).encode(),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )

    async def press(self, action: dict[str, Any], *, user: str, channel: str = "ch1") -> httpx.Response:
        body = {
            "user_id": user,
            "channel_id": channel,
            "team_id": "team1",
            "post_id": "p1",
            "trigger_id": f"press-{user}",
            "context": action["integration"]["context"],
        }
        return await self.http.post(action["integration"]["url"], json=body)


@pytest.fixture
async def mm(make_bot: Callable[..., Bot]) -> AsyncIterator[Callable[..., Any]]:
    async with contextlib.AsyncExitStack() as stack:

        async def start(*, extra: str = "", ack_after: float = 2.5) -> MM:
            bot = make_bot(
                extra,
                roles=([f"mattermost:{ALICE}", f"mattermost:{OSCAR}"], [f"mattermost:{BOB}"]),
                platform="mattermost",
                prefix="/pets ",
            )
            capture = Capture()
            hook = await stack.enter_async_context(serving(capture.app()))
            face = SlackFace(
                core=bot.core,
                flavour="mattermost",
                post=post_json,
                token=MattermostToken(TOKEN),
                response_origin=hook,
                ack_after=ack_after,
            )
            base = await stack.enter_async_context(serving(face.app()))
            http = await stack.enter_async_context(httpx.AsyncClient(timeout=30))
            return MM(bot=bot, http=http, base=base, hook=hook, capture=capture, face=face)

        yield start


async def test_the_token_is_checked_before_anything_runs(mm: Callable[..., Any]) -> None:
    m: MM = await mm(extra="confirm_writes = false")
    before = await m.bot.pet_count()
    for token in (None, "", "wrong-token"):
        answer = await m.command("add Forged --category 1", user=ALICE, token=token)
        assert answer.status_code == 401 and answer.json() == {"error": "unauthorized"}
    assert await m.bot.pet_count() == before and m.bot.audit_lines() == []


async def test_replies_are_markdown_code_blocks_ephemeral_for_reads(mm: Callable[..., Any]) -> None:
    m: MM = await mm()
    listed = (await m.command("list sold --limit 3", user=BOB)).json()
    assert listed["response_type"] == "ephemeral"
    assert listed["text"].startswith("```\nid  name    category  status\n 4  Goldie")
    refused = (await m.command("add Rex --category 1", user=BOB)).json()
    assert "needs the operator role" in refused["text"] and "attachments" not in refused


async def test_buttons_confirm_for_the_asker_only_and_a_forged_context_is_refused(mm: Callable[..., Any]) -> None:
    m: MM = await mm()
    before = await m.bot.pet_count()
    preview = (await m.command("add @channel --category 2", user=ALICE)).json()
    confirm, cancel = preview["attachments"][0]["actions"]
    assert confirm["integration"]["url"] == f"{m.base}/slack/interactions"
    assert (confirm["name"], cancel["name"]) == ("Confirm", "Cancel") and TOKEN not in json.dumps(preview)

    integration = confirm["integration"]
    forged = {**confirm, "integration": {**integration, "context": {**integration["context"], "code": "ZZZZ"}}}
    assert (await m.press(forged, user=ALICE)).status_code == 401
    other = (await m.press(confirm, user=OSCAR)).json()
    assert "Nothing to confirm" in other["ephemeral_text"] and await m.bot.pet_count() == before
    done = (await m.press(confirm, user=ALICE)).json()
    assert "@channel" in done["update"]["message"] and done["update"]["message"].startswith("```")
    assert done["update"]["props"] == {}  # the prompt is replaced: its buttons gone
    assert await m.bot.pet_count() == before + 1
    again = (await m.press(confirm, user=ALICE)).json()
    assert "Nothing to confirm" in again["ephemeral_text"] and await m.bot.pet_count() == before + 1


async def test_the_askers_cancel_replaces_the_prompt_without_its_buttons(mm: Callable[..., Any]) -> None:
    """Mattermost's action response (no Mattermost here: its protocol over loopback): ``update`` replaces the post
    with the buttons, ``props`` emptied so none is left to press; another person's press replaces nothing."""
    m: MM = await mm()
    _, cancel = (await m.command("add Nope --category 2", user=ALICE)).json()["attachments"][0]["actions"]
    assert "ephemeral_text" in (await m.press(cancel, user=OSCAR)).json()
    cancelled = (await m.press(cancel, user=ALICE)).json()
    assert list(cancelled) == ["update"] and cancelled["update"]["props"] == {}
    assert cancelled["update"]["message"].startswith("```\nCancelled: add pet 'Nope' (category 2)")


async def test_deny_button_by_a_second_operator_drops_the_request(mm: Callable[..., Any]) -> None:
    """With approvals on, the request carries signed Approve/Deny buttons (Mattermost's protocol over loopback): the
    asker's Approve is refused to them alone; another operator's Deny replaces the request, nothing sent."""
    m: MM = await mm(extra='approvals = ["sandbox"]')
    before = await m.bot.pet_count()
    request = (await m.command("add Nope --category 2", user=ALICE)).json()
    assert request["response_type"] == "in_channel" and "name        Nope" in request["text"]
    approve, deny = request["attachments"][0]["actions"]
    assert (approve["name"], deny["name"]) == ("Approve", "Deny")
    own = (await m.press(approve, user=ALICE)).json()
    assert "someone else must approve it" in own["ephemeral_text"]
    denied = (await m.press(deny, user=OSCAR)).json()
    assert denied["update"]["message"].startswith(f"```\nDenied by mattermost:{OSCAR}: add pet 'Nope' (category 2)")
    assert denied["update"]["props"] == {} and await m.bot.pet_count() == before
    late = (await m.press(approve, user=OSCAR)).json()
    assert "was already denied" in late["ephemeral_text"] and await m.bot.pet_count() == before


async def test_a_slow_answer_is_posted_once_to_the_mattermost_server(mm: Callable[..., Any]) -> None:
    m: MM = await mm(ack_after=0.0)
    ack = (await m.command("sleep 0.2", user=BOB)).json()
    assert ack["text"] == "```\nWorking on it: sleep 0.2\n```"
    delayed = await m.capture.next_post()
    await m.face.drain()
    assert delayed["text"] == "```\n(paused 0.2 s)\n```" and len(m.capture.posts) == 1


def _pets(audit: list[str]) -> list[tuple[str, int | None, bool]]:
    entries = [json.loads(line) for line in audit]
    return [(e["outcome"], e.get("pet_id"), e.get("replayed", False)) for e in entries]


async def test_without_trigger_id_two_identical_adds_are_two_writes_each_confirmed(mm: Callable[..., Any]) -> None:
    """Commands as an older Mattermost server sends them, without trigger_id (no Mattermost here: its protocol over
    loopback). Nothing names such a command, so each write waits for its Confirm button (confirm_writes = false or
    not), whose context carries a fresh nonce that names it: two commands, two pets, two honest audit lines."""
    m: MM = await mm(extra="confirm_writes = false")
    before = await m.bot.pet_count()
    prompts = [(await m.command("add Dup2 --category 2", user=ALICE, trigger=None)).json() for _ in range(2)]
    assert await m.bot.pet_count() == before  # nothing sent before a press
    confirms = []
    for prompt in prompts:
        assert prompt["response_type"] == "ephemeral" and "To add a pet, reply" in prompt["text"]
        assert "name        Dup2\ncategoryId  2" in prompt["text"]
        confirm, _ = prompt["attachments"][0]["actions"]
        confirms.append(confirm)
    nonces = {c["integration"]["context"]["nonce"] for c in confirms}
    assert len(nonces) == 2
    done = [(await m.press(confirm, user=ALICE)).json()["update"]["message"] for confirm in confirms]
    ids = [int(re.findall(r"Added pet (\d+)", text)[0]) for text in done]
    assert len(set(ids)) == 2 and await m.bot.pet_count() == before + 2
    assert _pets(m.bot.audit_lines()) == [
        ("pending", None, False),
        ("pending", None, False),
        ("ok", ids[0], False),
        ("ok", ids[1], False),
    ]
    with_trigger = (await m.command("add Now --category 2", user=ALICE, trigger="tr-1")).json()
    assert "Added pet" in with_trigger["text"]  # a trigger_id names the command: confirm_writes = false holds


async def test_a_double_click_on_confirm_is_one_write(mm: Callable[..., Any]) -> None:
    """Two presses of one Confirm at once, as Mattermost's server would post them (no Mattermost here): one write."""
    m: MM = await mm()
    before = await m.bot.pet_count()
    prompt = (await m.command("add Once --category 2", user=ALICE, trigger=None)).json()
    confirm, _ = prompt["attachments"][0]["actions"]
    first, second = await asyncio.gather(m.press(confirm, user=ALICE), m.press(confirm, user=ALICE))
    replies = sorted(json.dumps(answer.json()) for answer in (first, second))
    assert await m.bot.pet_count() == before + 1
    assert "Nothing to confirm" in replies[0] and "Added pet" in replies[1]


async def test_a_press_whose_nonce_was_changed_is_refused(mm: Callable[..., Any]) -> None:
    """A button context is signed whole: a sender choosing the nonce (so the write's Idempotency-Key) is refused."""
    m: MM = await mm()
    prompt = (await m.command("add Forged --category 2", user=ALICE, trigger=None)).json()
    confirm, _ = prompt["attachments"][0]["actions"]
    context = {**confirm["integration"]["context"], "nonce": "chosen-by-the-sender"}
    forged = {**confirm, "integration": {**confirm["integration"], "context": context}}
    assert (await m.press(forged, user=ALICE)).status_code == 401
    unsigned = {k: v for k, v in confirm["integration"]["context"].items() if k != "nonce"}
    assert (
        await m.press({**confirm, "integration": {**confirm["integration"], "context": unsigned}}, user=ALICE)
    ).status_code == 401


async def test_a_button_context_is_bound_to_its_prompts_channel_and_code(mm: Callable[..., Any]) -> None:
    """The context is signed over the action, the code, the asker, the channel and the nonce: pressed from another
    channel, or with any of them changed (a context copied from another request), it is refused and runs nothing."""
    m: MM = await mm()
    before = await m.bot.pet_count()
    here = (await m.command("add Here --category 2", user=ALICE)).json()["attachments"][0]["actions"][0]
    there = (await m.command("add There --category 2", user=ALICE, channel="ch2")).json()["attachments"][0]["actions"][
        0
    ]
    assert here["integration"]["context"]["channel"] == "ch1" and there["integration"]["context"]["channel"] == "ch2"

    def with_context(action: dict[str, Any], **changes: str) -> dict[str, Any]:
        context = {**action["integration"]["context"], **changes}
        return {**action, "integration": {**action["integration"], "context": context}}

    theirs = there["integration"]["context"]
    refused = [
        await m.press(there, user=ALICE, channel="ch1"),  # the other channel's button, pressed here
        await m.press(with_context(there, channel="ch1"), user=ALICE, channel="ch1"),  # its channel changed
        await m.press(with_context(here, code=theirs["code"]), user=ALICE),  # the other request's code
        await m.press(with_context(here, code=theirs["code"], nonce=theirs["nonce"]), user=ALICE),
        await m.press(with_context(here, user="mattermost:" + OSCAR), user=OSCAR),  # another asker
    ]
    assert [r.status_code for r in refused] == [401] * 5 and await m.bot.pet_count() == before
    done = (await m.press(there, user=ALICE, channel="ch2")).json()
    assert "There" in done["update"]["message"] and await m.bot.pet_count() == before + 1


async def test_a_channels_admin_reads_its_audit_in_a_code_block(mm: Callable[..., Any]) -> None:
    grants = f'[bot.rooms."ch1"]\noperators = ["mattermost:{ALICE}"]\nadmins = ["mattermost:carol1"]\n'
    m: MM = await mm(extra=grants)
    preview = (await m.command("add @channel **x** --category 2", user=ALICE)).json()
    confirm, _ = preview["attachments"][0]["actions"]
    assert "@channel" in (await m.press(confirm, user=ALICE)).json()["update"]["message"]
    refused = (await m.command("audit", user=ALICE)).json()["text"]
    assert "/pets audit needs the admin role in this room; you have operator (ask an admin)" in refused
    shown = (await m.command("audit", user="carol1")).json()
    assert shown["response_type"] == "ephemeral" and shown["text"].startswith("```\ntime (UTC)")
    assert "@channel **x**" in shown["text"] and shown["text"].endswith(
        "the last 2 audit lines of this room, oldest first\n```"
    )
