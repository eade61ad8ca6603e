"""The transport contract's factories for the platforms the bot had before it (Matrix, Slack, Mattermost).

Each factory builds its transport from its ``[bot.<platform>]`` section through :data:`petstore_bot.transport.FACTORIES`
and refuses a missing setting in one line; the Slack transport serves its endpoints until the stop event (a signed
command over loopback answered by the real core on the sandbox service). Matrix's run against a real Synapse is
tests/matrix's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from petstore_api.errors import ConfigError
from petstore_bot.addressing import Addressing
from petstore_bot.matrix import MatrixTransport
from petstore_bot.replies import notice_reply
from petstore_bot.settings import BotSettings
from petstore_bot.slack_transport import SlackTransport
from petstore_bot.transport import Transport, Wiring, factory_of

from .conftest import Bot
from .slack_api_server import APP_TOKEN, BOT_TOKEN, slack_server
from .slack_support import SECRET, SlackClient, _free_port, block_text

WHERE = "/etc/petstore/config.toml"


def _wiring(bot: BotSettings, tmp_path: Path, **more: object) -> Wiring:
    def addressing(names: object) -> Addressing:
        return Addressing(prefix="!", commands=frozenset({"list"}), names=tuple(names))  # type: ignore[arg-type]

    return Wiring(
        bot=bot,
        state_dir=tmp_path,
        config_where=WHERE,
        addressing=lambda names: addressing(names).line,
        accept_invite=lambda inviter, direct, room: False,
        **more,  # type: ignore[arg-type]
    )


def _matrix(**values: object) -> BotSettings:
    return BotSettings().model_copy(update={"matrix": BotSettings().matrix.model_copy(update=values)})


@pytest.mark.parametrize(
    ("values", "error"),
    [
        ({}, f"[bot.matrix] homeserver is not set: set it in {WHERE} or PETSTORE_BOT__MATRIX__HOMESERVER"),
        (
            {"homeserver": "https://m.example.org"},
            f"[bot.matrix] user_id is not set: set it in {WHERE} or PETSTORE_BOT__MATRIX__USER_ID",
        ),
        (
            {"homeserver": "https://m.example.org", "user_id": "@petbot:example.org"},
            f"[bot.matrix] needs one of password or access_token: set it in {WHERE} or "
            "PETSTORE_BOT__MATRIX__PASSWORD / PETSTORE_BOT__MATRIX__ACCESS_TOKEN",
        ),
    ],
)
def test_the_matrix_factory_names_the_missing_setting_in_one_line(
    values: dict[str, object], error: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError) as refused:
        factory_of("matrix")(_wiring(_matrix(**values), tmp_path))
    assert str(refused.value) == error


def test_the_matrix_transport_names_the_bot_and_owns_matrix_rooms(tmp_path: Path) -> None:
    settings = _matrix(homeserver="https://m.example.org", user_id="@petbot:example.org", password=SecretStr("pw"))
    made: Transport = factory_of("matrix")(_wiring(settings, tmp_path))
    assert isinstance(made, MatrixTransport) and made.platform == "matrix"
    assert made.names == ("petbot", "@petbot:example.org")
    assert not made.can_post  # not logged in yet
    assert made.owns("!abc:example.org") and made.owns("#ops:example.org")
    assert made.owns("!mSw0QNsAIHA5uYcqM9XpWa614i3dwm_yXVV4yutBEpw")  # room version 12: no server name
    for other in ("C0123ABCD", "T1/C0123ABCD", "irc:#ops", "ops@conference.example.org", "!nocolon", "# ops:x"):
        assert not made.owns(other), other


def test_slack_and_mattermost_own_their_channel_ids(bot: Bot, tmp_path: Path) -> None:
    secrets = {"signing_secret": SecretStr(SECRET)}
    slack_settings = bot.settings.model_copy(update={"slack": bot.settings.slack.model_copy(update=secrets)})
    slack = factory_of("slack")(_wiring(slack_settings, tmp_path, core=bot.core))
    mm = {"url": "https://chat.example.org", "token": SecretStr("t" * 26)}
    mm_settings = bot.settings.model_copy(update={"mattermost": bot.settings.mattermost.model_copy(update=mm)})
    mattermost = factory_of("mattermost")(_wiring(mm_settings, tmp_path, core=bot.core))
    assert (slack.platform, mattermost.platform) == ("slack", "mattermost")
    assert not slack.can_post and not mattermost.can_post  # no bot token: slash commands only
    assert all(slack.owns(room) for room in ("C0123ABCD", "G0123ABCD", "D0123ABCD", "T1/C0123ABCD"))
    assert not any(slack.owns(room) for room in ("!abc:example.org", "c0123abcd", "hfz7x1ndx3ruz8a6s7uq4h1z6a"))
    assert mattermost.owns("hfz7x1ndx3ruz8a6s7uq4h1z6a") and not mattermost.owns("C0123ABCD")


@pytest.mark.parametrize(
    ("platform", "error"),
    [
        ("slack", f"[bot.slack] signing_secret is not set: set it in {WHERE} or PETSTORE_BOT__SLACK__SIGNING_SECRET"),
        ("mattermost", f"[bot.mattermost] url is not set: set it in {WHERE} or PETSTORE_BOT__MATTERMOST__URL"),
    ],
)
def test_the_slack_factories_name_the_missing_setting_in_one_line(
    platform: str, error: str, bot: Bot, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError) as refused:
        factory_of(platform)(_wiring(BotSettings(), tmp_path, core=bot.core))
    assert str(refused.value) == error


async def test_the_slack_transport_serves_its_endpoints_until_stopped(
    make_bot: Callable[..., Bot], tmp_path: Path
) -> None:
    bot = make_bot(platform="slack", prefix="/pets ")
    secrets = {"signing_secret": SecretStr(SECRET)}
    settings = bot.settings.model_copy(update={"slack": bot.settings.slack.model_copy(update=secrets)})
    port = _free_port()
    made = factory_of("slack")(_wiring(settings, tmp_path, core=bot.core, listen=("127.0.0.1", port)))
    assert isinstance(made, SlackTransport)
    stop = asyncio.Event()
    running = asyncio.create_task(made.run(bot.core.handle, stop=stop))
    base = f"http://127.0.0.1:{port}"
    async with httpx.AsyncClient(timeout=10) as http:
        while True:  # until uvicorn listens
            try:
                await http.get(f"{base}/healthz")
                break
            except httpx.ConnectError:
                assert not running.done(), running.result()
                await asyncio.sleep(0.01)
        answer = await SlackClient(http=http, base=base, hook="https://hooks.slack.com").command("whoami", user="U1")
        assert answer.status_code == 200 and "slack:T1/U1" in answer.text
    stop.set()
    await asyncio.wait_for(running, timeout=10)


async def test_the_slack_transport_in_socket_mode_answers_and_posts_until_stopped(
    make_bot: Callable[..., Bot], tmp_path: Path
) -> None:
    bot = make_bot(platform="slack", prefix="/pets ")
    async with slack_server() as slack:
        tokens = {"app_token": SecretStr(APP_TOKEN), "bot_token": SecretStr(BOT_TOKEN), "api_url": slack.api_url}
        settings = bot.settings.model_copy(update={"slack": bot.settings.slack.model_copy(update=tokens)})
        made = factory_of("slack")(_wiring(settings, tmp_path, core=bot.core, socket_mode=True))
        stop = asyncio.Event()
        running = asyncio.create_task(made.run(bot.core.handle, stop=stop))
        await slack.wait_for(lambda: slack.connections)
        assert made.can_post and made.names == ("@petbot",)  # auth.test told the face its name
        form = {"team_id": "T1", "channel_id": "C1", "user_id": "U1", "command": "/pets", "text": "whoami"}
        sent = await slack.send("slash_commands", {**form, "response_url": f"{slack.hook_url}/1"}, accepts=True)
        assert "slack:T1/U1" in block_text((await slack.ack(sent))["payload"])
        assert await made.announce("T1/C0WATCH", notice_reply("New pet 7: Rex (category 1)"), key="k")
        stop.set()
        await asyncio.wait_for(running, timeout=10)
    assert [m["channel"] for m in slack.messages] == ["C0WATCH"]
