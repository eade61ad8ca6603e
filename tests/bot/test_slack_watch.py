"""!watch on Slack: the real ``petstore bot slack`` process posts new pets with ``chat.postMessage`` and its bot token.

Slack cannot be reached from here: the Web API is tests/bot/slack_api_server.py, written to Slack's published
protocol (bearer token checked, JSON ``ok`` answers), and the slash command is signed as Slack signs it. The pets
come from a real ``petstore serve``, added with the real ``petstore add``.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
from cli_support import clean_env, run_petstore
from server.support import running_server

from .slack_api_server import slack_server
from .slack_support import SlackClient, block_text, bot_process

KEY = "sk-slack-watch-0123456789"


def _posted(messages: list[dict[str, Any]], pet_id: int) -> list[dict[str, Any]]:
    return [m for m in messages if str(m.get("text", "")).startswith(f"New pet {pet_id}:")]


async def test_a_watching_channel_gets_new_pets_through_chat_post_message(tmp_path: Path) -> None:
    with ExitStack() as stack:
        _, url, _ = stack.enter_context(running_server(tmp_path / "pets.db", keys=[KEY]))
        async with slack_server() as slack:
            env = slack.bot_env(service=url, api_key=KEY)
            bot = await asyncio.to_thread(
                stack.enter_context,
                bot_process(tmp_path, config='watch_interval = 1\ndefault_role = "viewer"', env=env),
            )
            async with httpx.AsyncClient(timeout=30) as http:
                client = SlackClient(http=http, base=bot.base, hook=slack.hook_url, channel="CWATCH")
                answer = (await client.command("watch available", user="U1")).json()
                assert "Watching new pets with status available here" in block_text(answer)

            cli = clean_env(tmp_path / "cli", PETSTORE_BASE_URL=url, PETSTORE_API_KEY=KEY)
            added = run_petstore(
                "add", "<@U1> *bold* <!here>", "--category", "2", "--status", "available", "--json", env=cli
            )
            assert added.returncode == 0, added.stderr
            pet_id = int(json.loads(added.stdout.splitlines()[0])["result"]["id"])

            found = await slack.wait_for(lambda: _posted(slack.messages, pet_id), timeout=30)
            message = found[0]
            assert message["channel"] == "CWATCH"
            assert message["text"] == f"New pet {pet_id}: &lt;@U1&gt; *bold* &lt;!here&gt; (category 2, available)"
            assert len(_posted(slack.messages, pet_id)) == 1
