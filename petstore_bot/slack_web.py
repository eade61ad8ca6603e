"""Slack's Web API as the bot uses it: who the bot is (``auth.test``) and its replies (``chat.postMessage``), with
slack_sdk's async client below ``[bot.slack] api_url``. The token is the client's: never logged (slack_sdk redacts
the Authorization header in its own debug lines), never in an error message.
"""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

__all__ = ["SlackWeb", "SlackWebError"]

log = logging.getLogger("petstore_bot.slack")


class SlackWebError(Exception):
    """A Web API call Slack refused or that did not reach it: the method and Slack's error code, one line."""


class SlackWeb:
    """The bot's Web API client: ``bot_token`` (``xoxb-...``) on every call, methods below ``api_url``."""

    def __init__(self, *, bot_token: str, api_url: str, timeout: float = 10.0) -> None:
        self.client = AsyncWebClient(token=bot_token, base_url=api_url, timeout=int(timeout))
        #: The bot's user name (``auth.test``'s ``user``), once :meth:`bot_user` has asked; for its help.
        self.bot_name: str | None = None

    def __repr__(self) -> str:
        return f"SlackWeb(api_url={self.client.base_url!r}, bot_token=***)"

    async def bot_user(self) -> str:
        """The bot's own user id (``auth.test``): its mentions are commands, its own messages are ignored."""
        try:
            response = await self.client.auth_test()
        except SlackApiError as exc:
            raise SlackWebError(f"auth.test: Slack answered {exc.response.get('error')!r}") from None
        except Exception as exc:  # noqa: BLE001 -- aiohttp's and the loop's errors: one line for the person
            raise SlackWebError(f"auth.test: cannot reach {self.client.base_url}: {type(exc).__name__}") from None
        user = response.get("user_id")
        if not isinstance(user, str) or not user:
            raise SlackWebError("auth.test: no user_id in Slack's answer (is bot_token a bot token, xoxb-...?)")
        name = response.get("user")
        self.bot_name = name if isinstance(name, str) and name else None
        return user

    async def post_message(self, channel: str, payload: dict[str, object], thread_ts: str | None) -> bool:
        """Post ``payload`` (text and blocks) to ``channel``; whether Slack took it (a failure is logged, the bot
        stays up)."""
        try:
            await self.client.chat_postMessage(
                channel=channel,
                text=str(payload.get("text", "")),
                blocks=payload.get("blocks"),  # type: ignore[arg-type]
                thread_ts=thread_ts,
                unfurl_links=False,
                unfurl_media=False,
            )
        except SlackApiError as exc:
            log.error("chat.postMessage to %s failed: %s", channel, exc.response.get("error"))
            return False
        except Exception as exc:  # noqa: BLE001 -- the bot stays up; the audit log has any write
            log.error("chat.postMessage to %s failed: %s", channel, type(exc).__name__)
            return False
        return True
